// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package keys

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/limits"
)

// Source kinds.
const (
	KindPEM       = "pem"
	KindJWKSFile  = "jwks-file"
	KindJWKSURL   = "jwks-url"
	KindDiscovery = "issuer"
)

// DiscoveryPath is where an issuer publishes its OpenID discovery document.
const DiscoveryPath = "/.well-known/openid-configuration"

// FetchOptions configures how URLs are fetched.
type FetchOptions struct {
	// Timeout bounds each HTTP request (default 10 s).
	Timeout time.Duration
	// CAFile is a PEM bundle trusted for https URLs in addition to nothing else (system roots when empty).
	CAFile string
	// Insecure skips TLS verification.
	Insecure bool
	// BearerToken is sent as Authorization (kube-apiserver serves discovery only to authenticated
	// service accounts unless RBAC opens it), only to the origin (scheme, host, port) of the URL
	// given to Load: a jwks_uri or a redirect elsewhere is fetched without it.
	BearerToken string
	// TokenToJWKSHost also sends BearerToken to a discovery document's jwks_uri on another origin.
	TokenToJWKSHost bool
	// Client overrides the HTTP client (tests).
	Client *http.Client
}

// Set is a key set loaded from one source.
type Set struct {
	Source string // as given
	Kind   string // pem, jwks-file, jwks-url, issuer
	URL    string // the JWKS URL actually read, for URL sources
	Keys   []Key
	// Notes say what the caller should know of how the set was fetched (a token withheld).
	Notes []string
}

// Load reads a key source: a PEM file, a JWKS file, a JWKS URL, or an issuer URL (or discovery
// document URL) whose discovery document names the JWKS URL.
func Load(ctx context.Context, spec string, o FetchOptions) (*Set, error) {
	if strings.HasPrefix(spec, "https://") || strings.HasPrefix(spec, "http://") {
		return loadURL(ctx, spec, o)
	}
	data, err := readFile(ctx, spec)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("{")) {
		ks, err := ParseJWKS(data, spec)
		if err != nil {
			return nil, err
		}
		return &Set{Source: spec, Kind: KindJWKSFile, Keys: ks}, nil
	}
	ks, err := ParsePEM(data, spec)
	if err != nil {
		return nil, err
	}
	return &Set{Source: spec, Kind: KindPEM, Keys: ks}, nil
}

func (o FetchOptions) client(ctx context.Context) (*http.Client, error) {
	if o.Client != nil {
		return o.Client, nil
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.Insecure} //nolint:gosec // opt-in flag
	if o.CAFile != "" {
		pem, err := readFile(ctx, o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s: no PEM certificates", o.CAFile)
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	return &http.Client{Timeout: timeout, Transport: tr, CheckRedirect: keepTokenHome}, nil
}

// keepTokenHome follows up to 10 redirects, dropping Authorization from any to another origin
// than the first request's (net/http keeps it across a change of scheme or port), and refuses
// one from https to plain http: keys read that way could have been swapped by anyone on the path.
func keepTokenHome(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if err := downgrade(via[0].URL, req.URL); err != nil {
		return err
	}
	if Origin(req.URL) != Origin(via[0].URL) {
		req.Header.Del("Authorization")
	}
	return nil
}

// downgrade refuses key material at to, a plain http URL reached from from, an https one.
func downgrade(from, to *url.URL) error {
	if strings.EqualFold(from.Scheme, "https") && !strings.EqualFold(to.Scheme, "https") {
		return fmt.Errorf("refused to follow https to %s: key material over plain http could be replaced on the way", Origin(to))
	}
	return nil
}

// Origin is u's scheme, host and port (the default port spelled out), lower-cased.
func Origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// doc is what a URL answered: a JWKS, a discovery document, or neither.
type doc struct {
	keys    []Key
	jwksURI string
}

func loadURL(ctx context.Context, spec string, o FetchOptions) (*Set, error) {
	u, err := url.Parse(spec)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%s: not a URL", spec)
	}
	c, err := o.client(ctx)
	if err != nil {
		return nil, err
	}
	d, err := fetch(ctx, c, spec, o)
	var unreachable *unreachableError
	if err != nil && !errors.As(err, &unreachable) && !strings.HasSuffix(u.Path, DiscoveryPath) {
		// maybe an issuer URL: try its discovery document
		disc := strings.TrimSuffix(spec, "/") + DiscoveryPath
		d2, err2 := fetch(ctx, c, disc, o)
		if err2 != nil {
			return nil, fmt.Errorf("%w (also tried %s: %v)", err, disc, trimPrefix(err2, disc))
		}
		d = d2
	} else if err != nil {
		return nil, err
	}
	if d.keys != nil {
		return &Set{Source: spec, Kind: KindJWKSURL, URL: spec, Keys: d.keys}, nil
	}
	var notes []string
	jo := o
	ju, err := url.Parse(d.jwksURI)
	if err == nil {
		if err := downgrade(u, ju); err != nil {
			return nil, fmt.Errorf("%s: jwks_uri: %w", spec, err)
		}
	}
	if err != nil || Origin(ju) != Origin(u) {
		if o.BearerToken != "" && !o.TokenToJWKSHost {
			jo.BearerToken = ""
			notes = append(notes, fmt.Sprintf("%s: jwks_uri %s is on another origin than %s: fetched without the bearer token (--send-token-to-jwks-host sends it)",
				spec, d.jwksURI, Origin(u)))
		}
	}
	j, err := fetch(ctx, c, d.jwksURI, jo)
	if err != nil {
		return nil, fmt.Errorf("%s: jwks_uri: %w", spec, err)
	}
	if j.keys == nil {
		return nil, fmt.Errorf("%s: jwks_uri %s is a discovery document, not a JWKS", spec, d.jwksURI)
	}
	return &Set{Source: spec, Kind: KindDiscovery, URL: d.jwksURI, Keys: j.keys, Notes: notes}, nil
}

func trimPrefix(err error, prefix string) string {
	return strings.TrimPrefix(strings.TrimPrefix(err.Error(), prefix), ": ")
}

// fetch GETs u and classifies the answer. Errors start with u and are one line.
func fetch(ctx context.Context, c *http.Client, u string, o FetchOptions) (doc, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return doc{}, fmt.Errorf("%s: %w", u, err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	if o.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+o.BearerToken)
	}
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			if ue.Timeout() {
				return doc{}, &unreachableError{fmt.Sprintf("%s: timed out", u)}
			}
			err = ue.Err
		}
		return doc{}, &unreachableError{fmt.Sprintf("%s: %s", u, oneLine(err.Error()))}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxFileSize+1))
	if err != nil {
		if os.IsTimeout(err) || errors.Is(err, context.DeadlineExceeded) {
			return doc{}, &unreachableError{fmt.Sprintf("%s: timed out reading the response", u)}
		}
		return doc{}, fmt.Errorf("%s: read response: %s", u, oneLine(err.Error()))
	}
	if len(body) > MaxFileSize {
		return doc{}, &limits.TooLargeError{Name: req.URL.Host + req.URL.Path, Max: MaxFileSize, Response: true}
	}
	if resp.StatusCode != http.StatusOK {
		return doc{}, fmt.Errorf("%s: HTTP %s", u, resp.Status)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	trimmed := bytes.TrimSpace(body)
	if !bytes.HasPrefix(trimmed, []byte("{")) {
		if ct == "" {
			ct = "non-JSON data"
		}
		return doc{}, fmt.Errorf("%s: got %s, not a JWKS or OpenID discovery document", u, ct)
	}
	var probe struct {
		Keys    json.RawMessage `json:"keys"`
		JWKSURI string          `json:"jwks_uri"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return doc{}, fmt.Errorf("%s: invalid JSON: %s", u, oneLine(err.Error()))
	}
	switch {
	case probe.Keys != nil:
		ks, err := ParseJWKS(body, u)
		if err != nil {
			return doc{}, err
		}
		return doc{keys: ks}, nil
	case probe.JWKSURI != "":
		return doc{jwksURI: probe.JWKSURI}, nil
	}
	return doc{}, fmt.Errorf("%s: JSON without \"keys\" or \"jwks_uri\", not a JWKS or OpenID discovery document", u)
}

// unreachableError means the URL did not answer (timeout, refused, TLS): trying another path on
// the same host would not help.
type unreachableError struct{ msg string }

func (e *unreachableError) Error() string { return e.msg }

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
