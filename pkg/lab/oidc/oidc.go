// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package oidc runs the lab's OpenID Connect issuer: the identity provider a member's
// AuthenticationConfiguration (KEP-3331) trusts with a JWT authenticator. It serves OIDC
// discovery (/.well-known/openid-configuration) and its JWKS over HTTPS with a lab-CA serving
// certificate, and mints ID tokens for tests and scenarios. A scenario rotates its keys
// (Rotate), takes it off the network and back (SetReachable), or makes it serve a JWKS without a
// key a token was signed with. Private keys stay in memory and are never printed; a token is
// shown by its claims and kid only.
package oidc

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Paths the issuer serves.
const (
	DiscoveryPath = "/.well-known/openid-configuration"
	JWKSPath      = "/openid/v1/jwks"
)

// keyBits is the size of the issuer's RSA keys: RS256, the only algorithm kube-apiserver's JWT
// authenticator accepts when the configuration names none (k8s.io/apiserver
// plugin/pkg/authenticator/token/oidc/oidc.go at v0.36.3, lines 281-286).
const keyBits = 2048

// Config configures an issuer.
type Config struct {
	// Addr is where it listens (host:port; port 0 picks one, kept for the issuer's lifetime).
	Addr string
	// CertPEM and KeyPEM are its serving pair, a certificate whose SANs hold Addr's host.
	CertPEM, KeyPEM []byte
	// Log receives one line per request and per change (nil: none).
	Log func(format string, args ...any)
}

// Claims are an ID token's claims (iss is always the issuer's URL).
type Claims struct {
	Subject  string
	Audience []string
	// Lifetime is exp - iat (default 10 minutes).
	Lifetime time.Duration
	// Extra are further claims (e.g. "email", "groups").
	Extra map[string]any
}

// Issuer is one running issuer. Its methods are safe for concurrent use.
type Issuer struct {
	cfg  Config
	url  string
	addr string
	tlsc *tls.Config

	mu        sync.Mutex
	keys      []*rsa.PrivateKey // served in JWKS, signing key first
	withheld  map[string]bool   // kids signed with but left out of the JWKS
	srv       *http.Server
	reachable bool
	failJWKS  int            // HTTP status the JWKS answers instead (0: the key set)
	requests  map[string]int // path -> count
}

// Start generates a signing key and starts serving on cfg.Addr.
func Start(cfg Config) (*Issuer, error) {
	pair, err := tls.X509KeyPair(cfg.CertPEM, cfg.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("oidc issuer: serving pair: %w", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, keyBits)
	if err != nil {
		return nil, fmt.Errorf("oidc issuer: signing key: %w", err)
	}
	i := &Issuer{cfg: cfg, keys: []*rsa.PrivateKey{key}, withheld: map[string]bool{}, requests: map[string]int{},
		tlsc: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("oidc issuer: listen: %w", err)
	}
	i.addr = ln.Addr().String()
	i.url = "https://" + i.addr
	i.serve(ln)
	i.logf("oidc issuer: serving %s (key %s)", i.url, KeyID(&key.PublicKey))
	return i, nil
}

// URL is the issuer's URL: the iss of its tokens and the base of its discovery document.
func (i *Issuer) URL() string { return i.url }

// KeyIDs are the kids its JWKS serves now, the signing key's first.
func (i *Issuer) KeyIDs() []string {
	i.mu.Lock()
	defer i.mu.Unlock()
	var out []string
	for _, k := range i.keys {
		if kid := KeyID(&k.PublicKey); !i.withheld[kid] {
			out = append(out, kid)
		}
	}
	return out
}

// SigningKeyID is the kid of the key Mint signs with.
func (i *Issuer) SigningKeyID() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return KeyID(&i.keys[0].PublicKey)
}

// Rotate makes a new key the signing key. With keepOld the JWKS serves the old keys beside it
// (a rotation done right); without, only the new one (tokens signed before are refused once a
// member fetches the JWKS again).
func (i *Issuer) Rotate(keepOld bool) error {
	key, err := rsa.GenerateKey(rand.Reader, keyBits)
	if err != nil {
		return fmt.Errorf("oidc issuer: rotate: %w", err)
	}
	i.mu.Lock()
	if keepOld {
		i.keys = append([]*rsa.PrivateKey{key}, i.keys...)
	} else {
		i.keys = []*rsa.PrivateKey{key}
	}
	i.mu.Unlock()
	i.logf("oidc issuer: rotated to key %s (old keys kept: %t)", KeyID(&key.PublicKey), keepOld)
	return nil
}

// Withhold leaves the signing key out of the JWKS (true) or puts it back (false): tokens it
// signs then carry a kid no member can find.
func (i *Issuer) Withhold(on bool) {
	i.mu.Lock()
	kid := KeyID(&i.keys[0].PublicKey)
	i.withheld[kid] = on
	i.mu.Unlock()
	i.logf("oidc issuer: signing key %s withheld from the JWKS: %t", kid, on)
}

// FailJWKS makes the JWKS path answer status (e.g. 503) while discovery keeps answering, as an
// issuer whose key endpoint is down behind a working front page; 0 serves the key set again.
func (i *Issuer) FailJWKS(status int) {
	i.mu.Lock()
	i.failJWKS = status
	i.mu.Unlock()
	i.logf("oidc issuer: JWKS answers %d (0: the key set)", status)
}

// SetReachable closes the issuer's listener (false: connections to it are refused) or listens
// again on the same address (true).
func (i *Issuer) SetReachable(on bool) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if on == i.reachable {
		return nil
	}
	if !on {
		srv := i.srv
		i.srv, i.reachable = nil, false
		i.logf("oidc issuer: %s unreachable", i.url)
		return srv.Close()
	}
	ln, err := net.Listen("tcp", i.addr)
	if err != nil {
		return fmt.Errorf("oidc issuer: listen again on %s: %w", i.addr, err)
	}
	i.serveLocked(ln)
	i.logf("oidc issuer: %s reachable again", i.url)
	return nil
}

// Requests is how many requests each path has answered.
func (i *Issuer) Requests() map[string]int {
	i.mu.Lock()
	defer i.mu.Unlock()
	out := make(map[string]int, len(i.requests))
	for k, v := range i.requests {
		out[k] = v
	}
	return out
}

// Mint signs an ID token with the signing key.
func (i *Issuer) Mint(c Claims) (string, error) {
	if c.Subject == "" || len(c.Audience) == 0 {
		return "", errors.New("oidc issuer: an ID token needs a subject and an audience")
	}
	if c.Lifetime <= 0 {
		c.Lifetime = 10 * time.Minute
	}
	i.mu.Lock()
	key := i.keys[0]
	i.mu.Unlock()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: KeyID(&key.PublicKey)}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("oidc issuer: signer: %w", err)
	}
	// A random jti makes every token new to a member's token cache (it keeps a verdict 10 s).
	jti := make([]byte, 12)
	if _, err := rand.Read(jti); err != nil {
		return "", fmt.Errorf("oidc issuer: jti: %w", err)
	}
	now := time.Now()
	std := jwt.Claims{Issuer: i.url, Subject: c.Subject, Audience: jwt.Audience(c.Audience), ID: base64.RawURLEncoding.EncodeToString(jti),
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(c.Lifetime))}
	b := jwt.Signed(sig).Claims(std)
	if len(c.Extra) > 0 {
		b = b.Claims(c.Extra)
	}
	tok, err := b.Serialize()
	if err != nil {
		return "", fmt.Errorf("oidc issuer: sign: %w", err)
	}
	return tok, nil
}

// Close stops serving.
func (i *Issuer) Close() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.reachable = false
	if i.srv == nil {
		return nil
	}
	err := i.srv.Close()
	i.srv = nil
	return err
}

// Discovery is the issuer's discovery document (the fields kube-apiserver reads).
type Discovery struct {
	Issuer  string   `json:"issuer"`
	JWKSURI string   `json:"jwks_uri"`
	Algs    []string `json:"id_token_signing_alg_values_supported"`
	Subject []string `json:"subject_types_supported"`
	Types   []string `json:"response_types_supported"`
}

func (i *Issuer) serve(ln net.Listener) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.serveLocked(ln)
}

func (i *Issuer) serveLocked(ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+DiscoveryPath, func(w http.ResponseWriter, r *http.Request) {
		i.count(DiscoveryPath)
		writeJSON(w, Discovery{Issuer: i.url, JWKSURI: i.url + JWKSPath, Algs: []string{"RS256"},
			Subject: []string{"public"}, Types: []string{"id_token"}})
	})
	mux.HandleFunc("GET "+JWKSPath, func(w http.ResponseWriter, r *http.Request) {
		i.count(JWKSPath)
		i.mu.Lock()
		status := i.failJWKS
		i.mu.Unlock()
		if status != 0 {
			// No trailing newline (http.Error adds one): kube-apiserver quotes the body in its
			// error, and a newline makes klog write the line as a multi-line err=<...> block.
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(status)
			_, _ = w.Write([]byte("key set unavailable"))
			return
		}
		writeJSON(w, i.jwks())
	})
	srv := &http.Server{Handler: mux, TLSConfig: i.tlsc, ReadHeaderTimeout: 5 * time.Second}
	i.srv, i.reachable = srv, true
	go func() { _ = srv.Serve(tls.NewListener(ln, i.tlsc)) }()
}

func (i *Issuer) count(path string) {
	i.mu.Lock()
	i.requests[path]++
	i.mu.Unlock()
	i.logf("oidc issuer: GET %s", path)
}

// jwks is the public key set the issuer serves now.
func (i *Issuer) jwks() jose.JSONWebKeySet {
	i.mu.Lock()
	defer i.mu.Unlock()
	var set jose.JSONWebKeySet
	for _, k := range i.keys {
		kid := KeyID(&k.PublicKey)
		if i.withheld[kid] {
			continue
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Algorithm: "RS256", Use: "sig"})
	}
	return set
}

func writeJSON(w http.ResponseWriter, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

func (i *Issuer) logf(format string, args ...any) {
	if i.cfg.Log != nil {
		i.cfg.Log(format, args...)
	}
}

// KeyID is a public key's kid: its RFC 7638 thumbprint (SHA-256, base64url), as a JWKS names it.
func KeyID(pub crypto.PublicKey) string {
	tp, err := (&jose.JSONWebKey{Key: pub}).Thumbprint(crypto.SHA256)
	if err != nil {
		sum := sha256.Sum256(fmt.Append(nil, pub))
		tp = sum[:]
	}
	return base64.RawURLEncoding.EncodeToString(tp)
}

// WaitServing waits until the issuer answers discovery (bounded by ctx), trusting roots.
func (i *Issuer) WaitServing(ctx context.Context, c *http.Client) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, i.url+DiscoveryPath, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("oidc issuer %s: not serving: %w", i.url, errors.Join(err, ctx.Err()))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
