// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package tenant

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/bearer"
)

// KubeletExpirationSeconds is what the kubelet asks for in a projected token's TokenRequest. With
// --service-account-extend-token-expiration (the default) the JWT is then valid for a year while the
// status still says about one hour.
const KubeletExpirationSeconds = 3607

// kubelet refresh rule (pkg/kubelet/token/token_manager.go): refresh after 24 h or within 20 % of
// the lifetime from the expiration.
const (
	maxTTL        = 24 * time.Hour
	refreshWithin = 20 // percent of the lifetime before expiry
)

// Bound names the object a token is bound to (a Pod, as the kubelet does it).
type Bound struct {
	Kind string    `json:"kind"` // "Pod" (default) or "Secret"
	Name string    `json:"name"`
	UID  types.UID `json:"uid"`
}

// MintRequest is one TokenRequest.
type MintRequest struct {
	Namespace         string
	ServiceAccount    string
	Bound             *Bound   // nil: an unbound token
	ExpirationSeconds int64    // default KubeletExpirationSeconds
	Audiences         []string // nil: the API audiences (what the kubelet asks for by default)
}

// Token is a minted token and who minted it.
type Token struct {
	Value             string    `json:"-"`
	MintedBy          string    `json:"mintedBy"` // CommonName of the member that answered the TokenRequest
	IssuedAt          time.Time `json:"issuedAt"` // local clock when the response came back
	ExpirationSeconds int64     `json:"expirationSeconds"`
	Expires           time.Time `json:"expires"` // status.expirationTimestamp
}

// Printable is the token without its signature (tokens are never printed whole).
func (t Token) Printable() string { return Printable(t.Value) }

// Printable drops the signature part of a JWT.
func Printable(tok string) string { return bearer.Printable(tok) }

// NeedsRefresh applies the kubelet's rule: refresh when older than 24 h or when within 20 % of the
// requested lifetime from the expiration timestamp.
func (t Token) NeedsRefresh(now time.Time) bool {
	if t.Value == "" {
		return true
	}
	if t.Expires.IsZero() || t.ExpirationSeconds <= 0 {
		return false
	}
	iat := t.Expires.Add(-time.Duration(t.ExpirationSeconds) * time.Second)
	if now.After(iat.Add(maxTTL)) {
		return true
	}
	return now.After(t.Expires.Add(-time.Duration(t.ExpirationSeconds*refreshWithin/100) * time.Second))
}

// adminClient is an HTTP client with cfg's credentials that opens a new connection per request, so
// a load balancer spreads requests across members.
func adminClient(cfg *rest.Config, timeout time.Duration) (*http.Client, error) {
	tlsConf, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("TLS config for %s: %w", cfg.Host, err)
	}
	tr := &http.Transport{TLSClientConfig: tlsConf, DisableKeepAlives: true, Proxy: nil}
	rt, err := rest.HTTPWrappersForConfig(cfg, tr)
	if err != nil {
		return nil, fmt.Errorf("credentials for %s: %w", cfg.Host, err)
	}
	return &http.Client{Transport: rt, Timeout: timeout}, nil
}

// caOf returns the CA bundle of cfg.
func caOf(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 {
		return cfg.CAData, nil
	}
	if cfg.CAFile != "" {
		return readFile(cfg.CAFile)
	}
	return nil, fmt.Errorf("rest config for %s has no CA", cfg.Host)
}

// mint does one TokenRequest with client against host.
func mint(ctx context.Context, client *http.Client, host string, r MintRequest) (Token, error) {
	exp := r.ExpirationSeconds
	if exp == 0 {
		exp = KubeletExpirationSeconds
	}
	tr := authenticationv1.TokenRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenRequest"},
		Spec:     authenticationv1.TokenRequestSpec{Audiences: r.Audiences, ExpirationSeconds: &exp},
	}
	if r.Bound != nil {
		kind := r.Bound.Kind
		if kind == "" {
			kind = "Pod"
		}
		tr.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: kind, APIVersion: "v1", Name: r.Bound.Name, UID: r.Bound.UID}
	}
	body, err := json.Marshal(tr)
	if err != nil {
		return Token{}, fmt.Errorf("encode TokenRequest: %w", err)
	}
	u := strings.TrimRight(host, "/") + "/api/v1/namespaces/" + url.PathEscape(r.Namespace) + "/serviceaccounts/" + url.PathEscape(r.ServiceAccount) + "/token"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return Token{}, fmt.Errorf("TokenRequest for %s/%s: %w", r.Namespace, r.ServiceAccount, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return Token{}, fmt.Errorf("TokenRequest for %s/%s: %w", r.Namespace, r.ServiceAccount, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Token{}, fmt.Errorf("TokenRequest for %s/%s: reading response: %w", r.Namespace, r.ServiceAccount, err)
	}
	by := bearer.ServedBy(resp)
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return Token{MintedBy: by}, fmt.Errorf("TokenRequest for %s/%s via %s: HTTP %d: %s", r.Namespace, r.ServiceAccount, orNone(by), resp.StatusCode, statusMessage(data))
	}
	var out authenticationv1.TokenRequest
	if err := json.Unmarshal(data, &out); err != nil {
		return Token{MintedBy: by}, fmt.Errorf("TokenRequest for %s/%s: decoding response: %w", r.Namespace, r.ServiceAccount, err)
	}
	if out.Status.Token == "" {
		return Token{MintedBy: by}, fmt.Errorf("TokenRequest for %s/%s via %s: empty token", r.Namespace, r.ServiceAccount, orNone(by))
	}
	return Token{Value: out.Status.Token, MintedBy: by, IssuedAt: time.Now(), ExpirationSeconds: exp, Expires: out.Status.ExpirationTimestamp.Time}, nil
}

// MintVia does one TokenRequest through cfg (for example lab.MemberRESTConfig(name), to mint on one
// particular member) and reports which member answered.
func MintVia(ctx context.Context, cfg *rest.Config, r MintRequest) (Token, error) {
	c, err := adminClient(cfg, 30*time.Second)
	if err != nil {
		return Token{}, err
	}
	return mint(ctx, c, cfg.Host, r)
}

// Presented is the answer of one member to a token.
type Presented = bearer.Presented

// Present sends a SelfSubjectReview with token as bearer to baseURL (a member's URL or the load
// balancer), trusting caPEM. Any authenticated user may create a SelfSubjectReview, so 201 means
// the token was accepted and 401 that it was rejected. timeout bounds the request (0: 30 s).
func Present(ctx context.Context, baseURL string, caPEM []byte, token string, timeout time.Duration) Presented {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	c, err := bearer.Client(caPEM, timeout)
	if err != nil {
		return Presented{Error: err.Error()}
	}
	return bearer.Present(ctx, c, baseURL, token)
}

// statusMessage is the message of a metav1.Status body, else the start of the body.
func statusMessage(data []byte) string {
	_, msg := bearer.StatusReason(data)
	return msg
}

func orNone(s string) string {
	if s == "" {
		return bearer.NoResponse
	}
	return s
}
