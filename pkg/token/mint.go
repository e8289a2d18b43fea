// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/big"
	"time"

	"github.com/credwatch/credwatch/pkg/keys"
)

// MintOptions describes a token as a TokenRequest (or, with Legacy, kube-controller-manager's
// tokens controller) would produce it. Minting writes nothing anywhere.
type MintOptions struct {
	// Key must carry a private key.
	Key keys.Key
	// Issuer is the first --service-account-issuer (ignored for Legacy).
	Issuer string
	// Audiences default to []string{Issuer}, as --api-audiences defaults to the issuers.
	Audiences []string
	// IssuedAt is the issuing member's clock (iat = nbf); default time.Now().
	IssuedAt time.Time
	// ExpirationSeconds is spec.expirationSeconds (default 3600).
	ExpirationSeconds int64
	// Extend applies --service-account-extend-token-expiration: needs a pod binding and
	// ExpirationSeconds 3607; exp becomes IssuedAt+ExtendedExpiration and warnafter IssuedAt+3607.
	Extend bool
	// ExtendedExpiration overrides the one-year extension (--service-account-max-token-expiration).
	ExtendedExpiration time.Duration

	Namespace      string
	ServiceAccount Ref
	// At most one of Pod, Secret, Node binds the token; Node with Pod records the pod's node.
	Pod, Secret, Node *Ref

	// JTI is the jti claim; empty means a random UUID (ServiceAccountTokenJTI, on since 1.30)
	// unless NoJTI is set.
	JTI   string
	NoJTI bool

	// Legacy mints a secret-based token (iss kubernetes/serviceaccount, no time claims) for
	// the Secret named LegacySecret.
	Legacy       bool
	LegacySecret string

	// OmitKeyID leaves kid out of the header, like signers that predate kid (for drills: such a
	// token is checked against every key on every line).
	OmitKeyID bool

	// OmitNotBefore leaves nbf out. No kube-apiserver mints such a token; drills use it to show
	// an iat in the future on its own ("issued in the future" rather than "not valid yet").
	OmitNotBefore bool

	// Rand is the randomness source (default crypto/rand).
	Rand io.Reader
}

// Mint signs a token exactly as kube-apiserver does: header {"alg","kid"}, claims merged the way
// go-jose's builder merges them (one JSON object, keys sorted), aud always a list, iat = nbf.
func Mint(o MintOptions) (string, error) {
	if o.Key.Private == nil {
		return "", errors.New("mint: the key has no private half (a PEM private key is needed)")
	}
	if o.Rand == nil {
		o.Rand = rand.Reader
	}
	payload, err := o.claims()
	if err != nil {
		return "", err
	}
	return sign(o.Key, payload, o.OmitKeyID, o.Rand)
}

func (o MintOptions) claims() (map[string]any, error) {
	if o.Namespace == "" || o.ServiceAccount.Name == "" {
		return nil, errors.New("mint: namespace and service account name are required")
	}
	sub := "system:serviceaccount:" + o.Namespace + ":" + o.ServiceAccount.Name
	if o.Legacy {
		if o.LegacySecret == "" {
			return nil, errors.New("mint: a legacy token needs the name of its Secret")
		}
		return map[string]any{
			"iss":                                    LegacyIssuer,
			"sub":                                    sub,
			"kubernetes.io/serviceaccount/namespace": o.Namespace,
			"kubernetes.io/serviceaccount/secret.name":          o.LegacySecret,
			"kubernetes.io/serviceaccount/service-account.name": o.ServiceAccount.Name,
			"kubernetes.io/serviceaccount/service-account.uid":  o.ServiceAccount.UID,
		}, nil
	}
	if o.Issuer == "" {
		return nil, errors.New("mint: an issuer is required")
	}
	if o.Secret != nil && (o.Pod != nil || o.Node != nil) {
		return nil, errors.New("mint: a token can only be bound to one object type")
	}
	auds := o.Audiences
	if len(auds) == 0 {
		auds = []string{o.Issuer}
	}
	iat := o.IssuedAt
	if iat.IsZero() {
		iat = time.Now()
	}
	expSec := o.ExpirationSeconds
	if expSec == 0 {
		expSec = 3600
	}
	var warnAfter int64
	if o.Extend {
		if o.Pod == nil {
			return nil, errors.New("mint: kube-apiserver extends only pod-bound tokens")
		}
		if expSec != WarnOnlyExpirationSeconds {
			return nil, fmt.Errorf("mint: kube-apiserver extends only %d-s requests, not %d", WarnOnlyExpirationSeconds, expSec)
		}
		ext := o.ExtendedExpiration
		if ext == 0 {
			ext = ExtendedExpiration
		}
		warnAfter, expSec = expSec, int64(ext/time.Second)
	}
	now := iat.Unix()
	k8s := map[string]any{
		"namespace":      o.Namespace,
		"serviceaccount": refMap(o.ServiceAccount),
	}
	switch {
	case o.Pod != nil:
		k8s["pod"] = refMap(*o.Pod)
		if o.Node != nil {
			k8s["node"] = refMap(*o.Node)
		}
	case o.Secret != nil:
		k8s["secret"] = refMap(*o.Secret)
	case o.Node != nil:
		k8s["node"] = refMap(*o.Node)
	}
	if warnAfter != 0 {
		k8s["warnafter"] = now + warnAfter
	}
	c := map[string]any{
		"iss":           o.Issuer,
		"sub":           sub,
		"aud":           auds,
		"iat":           now,
		"nbf":           now,
		"exp":           now + expSec,
		"kubernetes.io": k8s,
	}
	if o.OmitNotBefore {
		delete(c, "nbf")
	}
	switch {
	case o.JTI != "":
		c["jti"] = o.JTI
	case !o.NoJTI:
		id, err := uuid(o.Rand)
		if err != nil {
			return nil, err
		}
		c["jti"] = id
	}
	return c, nil
}

// refMap renders a ref as claims.go's ref struct does (omitempty on both fields).
func refMap(r Ref) map[string]any {
	m := map[string]any{}
	if r.Name != "" {
		m["name"] = r.Name
	}
	if r.UID != "" {
		m["uid"] = r.UID
	}
	return m
}

func uuid(r io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("mint: jti: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// sign produces header.payload.signature with k.
func sign(k keys.Key, claims map[string]any, omitKID bool, r io.Reader) (string, error) {
	h := map[string]string{"alg": k.Algorithm, "kid": k.KeyID}
	if omitKID {
		delete(h, "kid")
	}
	hdr, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	pl, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("mint: encode claims: %w", err)
	}
	input := base64.RawURLEncoding.EncodeToString(hdr) + "." + base64.RawURLEncoding.EncodeToString(pl)
	hf, ch, size, err := hashFor(k.Algorithm)
	if err != nil {
		return "", err
	}
	hf.Write([]byte(input))
	digest := hf.Sum(nil)
	var sig []byte
	switch priv := k.Private.(type) {
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(r, priv, ch, digest)
	case *ecdsa.PrivateKey:
		var rr, ss *big.Int
		rr, ss, err = ecdsa.Sign(r, priv, digest)
		if err == nil {
			sig = make([]byte, 2*size)
			rr.FillBytes(sig[:size])
			ss.FillBytes(sig[size:])
		}
	default:
		err = fmt.Errorf("key type %T", k.Private)
	}
	if err != nil {
		return "", fmt.Errorf("mint: sign: %w", err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// hashFor returns the hash, its crypto.Hash and (ECDSA) the coordinate size for alg.
func hashFor(alg string) (hash.Hash, crypto.Hash, int, error) {
	switch alg {
	case "RS256":
		return sha256.New(), crypto.SHA256, 0, nil
	case "ES256":
		return sha256.New(), crypto.SHA256, 32, nil
	case "ES384":
		return sha512.New384(), crypto.SHA384, 48, nil
	case "ES512":
		return sha512.New(), crypto.SHA512, 66, nil
	}
	return nil, 0, 0, fmt.Errorf("alg %q", alg)
}

// verifySignature checks t's signature with pub as go-jose does: any failure (wrong key type,
// wrong size, mismatch) is the same "error in cryptographic primitive".
func verifySignature(t *Token, pub crypto.PublicKey) bool {
	h, ch, size, err := hashFor(t.Header.Algorithm)
	if err != nil {
		return false
	}
	h.Write([]byte(t.signingInput))
	digest := h.Sum(nil)
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return size == 0 && rsa.VerifyPKCS1v15(k, ch, digest, t.signature) == nil
	case *ecdsa.PublicKey:
		if size == 0 || len(t.signature) != 2*size {
			return false
		}
		r := new(big.Int).SetBytes(t.signature[:size])
		s := new(big.Int).SetBytes(t.signature[size:])
		return ecdsa.Verify(k, digest, r, s)
	}
	return false
}
