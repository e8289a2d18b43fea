// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token

import (
	"time"
)

// LegacyIssuer is the iss of secret-based tokens (pkg/serviceaccount/legacy.go).
const LegacyIssuer = "kubernetes/serviceaccount"

// Token types.
const (
	TypeBound  = "bound"              // TokenRequest token (kubernetes.io claim), bound to a pod, secret, node or nothing
	TypeLegacy = "legacy"             // secret-based token minted by kube-controller-manager
	TypeOther  = "not-serviceaccount" // e.g. an OIDC ID token
)

// kube-apiserver constants (pkg/serviceaccount/claims.go).
const (
	// WarnOnlyExpirationSeconds is the admission plugin's projected-token request, which
	// --service-account-extend-token-expiration turns into a one-year token.
	WarnOnlyExpirationSeconds = 60*60 + 7
	// ExtendedExpiration is the default --service-account-max-token-expiration for extension.
	ExtendedExpiration = 365 * 24 * time.Hour
	// Leeway is go-jose's DefaultLeeway, applied to nbf, exp and iat.
	Leeway = time.Minute
)

// Binding describes whom a token belongs to and what it is bound to.
type Binding struct {
	Namespace      string `json:"namespace,omitempty"`
	ServiceAccount Ref    `json:"serviceAccount"`
	// BoundTo is pod, secret, node, or "" (not bound to an object).
	BoundTo string `json:"boundTo,omitempty"`
	Object  *Ref   `json:"object,omitempty"`
	// Node is the node a pod-bound token records (ServiceAccountTokenPodNodeInfo); not checked.
	Node *Ref `json:"node,omitempty"`
	// Secret is the Secret holding a legacy token.
	Secret string `json:"secret,omitempty"`
}

// Classify says what kind of token t is.
func (t *Token) Classify() (string, *Binding) {
	c := t.Claims
	if c.Issuer == LegacyIssuer {
		b := &Binding{}
		if c.Legacy != nil {
			b.Namespace = c.Legacy.Namespace
			b.ServiceAccount = Ref{Name: c.Legacy.ServiceAccountName, UID: c.Legacy.ServiceAccountUID}
			b.Secret = c.Legacy.SecretName
		}
		return TypeLegacy, b
	}
	k := c.Kubernetes
	if k == nil || (k.ServiceAccount.Name == "" && k.Namespace == "") {
		return TypeOther, nil
	}
	b := &Binding{Namespace: k.Namespace, ServiceAccount: k.ServiceAccount}
	switch {
	case k.Pod != nil:
		b.BoundTo, b.Object, b.Node = "pod", k.Pod, k.Node
	case k.Secret != nil:
		b.BoundTo, b.Object = "secret", k.Secret
	case k.Node != nil:
		b.BoundTo, b.Object = "node", k.Node
	}
	return TypeBound, b
}

// Refresh is the kubelet token manager's view of a pod-bound token
// (pkg/kubelet/token/token_manager.go requiresRefresh).
type Refresh struct {
	// ExpirationSeconds is what the kubelet requested: warnafter−iat for an extended token, else exp−iat.
	ExpirationSeconds int64 `json:"expirationSeconds"`
	// KubeletExpiry is status.expirationTimestamp as the kubelet sees it (iat+ExpirationSeconds);
	// for an extended token it is much earlier than the JWT's exp.
	KubeletExpiry time.Time `json:"kubeletExpiry"`
	// RefreshAt is when the kubelet replaces the token: the earlier of iat+24h and
	// KubeletExpiry − 20% of ExpirationSeconds (up to 10 s of jitter earlier).
	RefreshAt time.Time `json:"refreshAt"`
	// Reason is "80% of lifetime" or "24h maximum age".
	Reason string `json:"reason"`
	// Due reports whether, at the reference time, the kubelet would already have refreshed it.
	Due bool `json:"due"`
	// Extended reports a 3607-s request extended to a long exp with warnafter.
	Extended bool `json:"extended"`
	// WarnAfter is kubernetes.io.warnafter (extended tokens).
	WarnAfter *time.Time `json:"warnAfter,omitempty"`
	// Stale reports use after WarnAfter: every such use increments serviceaccount_stale_tokens_total
	// and adds the audit annotation authentication.k8s.io/stale-token.
	Stale bool `json:"stale"`
}

const maxTTL = 24 * time.Hour

// KubeletRefresh computes the kubelet's refresh schedule at time now. ok is false for tokens the
// kubelet does not manage (not pod-bound, or without iat/exp).
func (t *Token) KubeletRefresh(now time.Time) (Refresh, bool) {
	typ, b := t.Classify()
	c := t.Claims
	if typ != TypeBound || b.BoundTo != "pod" || c.IssuedAt == nil || c.Expiry == nil {
		return Refresh{}, false
	}
	iat := Time(c.IssuedAt)
	r := Refresh{ExpirationSeconds: *c.Expiry - *c.IssuedAt}
	if w := c.Kubernetes.WarnAfter; w != nil && *w != 0 {
		wt := Time(w)
		r.Extended, r.WarnAfter = true, &wt
		r.ExpirationSeconds = *w - *c.IssuedAt
		r.Stale = now.After(wt)
	}
	if r.ExpirationSeconds <= 0 {
		return Refresh{}, false
	}
	r.KubeletExpiry = iat.Add(time.Duration(r.ExpirationSeconds) * time.Second)
	r.RefreshAt = r.KubeletExpiry.Add(-time.Duration(r.ExpirationSeconds*20/100) * time.Second)
	r.Reason = "80% of lifetime"
	if byAge := iat.Add(maxTTL); byAge.Before(r.RefreshAt) {
		r.RefreshAt, r.Reason = byAge, "24h maximum age"
	}
	r.Due = now.After(r.RefreshAt)
	return r, true
}
