// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package audit

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Annotations kube-apiserver adds to a request's audit event while it authenticates a
// service-account token that deserves a look, as of k8s.io/kubernetes@v1.36.3. Its metrics count
// the same authentications (serviceaccount_stale_tokens_total, serviceaccount_legacy_tokens_total)
// with no label: the audit log is the only place that names the service account.
//
//   - StaleTokenKey: a projected token used after its warnafter claim, the extended token the
//     kubelet was given in place of a 1-hour one (pkg/serviceaccount/claims.go:265-272, at the end
//     of a successful validation). Value: "subject: system:serviceaccount:NS:NAME, seconds after
//     warning threshold: N".
//   - LegacyTokenKey: a token without an audience, a Secret-based token, once its signature and
//     issuer checked out (pkg/serviceaccount/jwt.go:382-387). Value: its subject,
//     "system:serviceaccount:NS:NAME".
//
// kube-apiserver always wraps its token authenticators in a cache (10 s for a success, none for a
// failure: pkg/kubeapiserver/options/authentication.go:168-169, authenticator/config.go:207-210).
// A success's annotations are added again to every request the cache answers, so each request
// made with such a token carries its annotation, while the counters above count only the cache's
// misses. A failure's annotations are recorded in a context of the cache's own and dropped
// (k8s.io/apiserver@v0.36.3 pkg/authentication/token/cache/cached_token_authenticator.go,
// AuthenticateToken and doAuthenticateToken): a refused token's 401 event names no account.
const (
	StaleTokenKey  = "authentication.k8s.io/stale-token"
	LegacyTokenKey = "authentication.k8s.io/legacy-token"
)

// Kinds of TokenUse.
const (
	TokenStale  = "stale"  // a stale projected token
	TokenLegacy = "legacy" // a legacy (Secret-based) token
)

// TokenUse is a service account's token that an audit event's annotations name on a request it
// authenticated. No refused token is one: the 401 event of a failed authentication has no user
// and, through kube-apiserver's token cache, no annotation, so no audit log names the account of
// a token refused for its signature, key, audience or expiry, nor of a legacy token refused for
// its Secret (Trace can only correlate such 401s with a credential by client).
type TokenUse struct {
	Kind      string
	Namespace string
	Name      string
}

// MayNameTokenUse reports whether an audit log line may carry a TokenUse, without decoding it:
// it holds one of the annotations' keys as the JSON encoder writes them.
func MayNameTokenUse(line string) bool {
	return strings.Contains(line, `"`+StaleTokenKey+`"`) || strings.Contains(line, `"`+LegacyTokenKey+`"`)
}

// TokenUse returns the service-account token use the event's annotations name, once per request:
// at the request's final event (Final: ResponseComplete or Panic), of a request that passed
// authentication (not a 401). A subject that is not a service account's valid name is not a
// TokenUse.
func (ev *Event) TokenUse() (TokenUse, bool) {
	if !ev.Final() || ev.Code() == 401 {
		return TokenUse{}, false
	}
	if subject, ok := ev.Annotations[LegacyTokenKey]; ok {
		return tokenUse(TokenLegacy, subject)
	}
	if v, ok := ev.Annotations[StaleTokenKey]; ok {
		if rest, ok := strings.CutPrefix(v, "subject: "); ok {
			subject, _, _ := strings.Cut(rest, ", ")
			return tokenUse(TokenStale, subject)
		}
	}
	return TokenUse{}, false
}

// tokenUse reads a service account's username, system:serviceaccount:NS:NAME.
func tokenUse(kind, subject string) (TokenUse, bool) {
	rest, ok := strings.CutPrefix(subject, "system:serviceaccount:")
	ns, name, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return TokenUse{}, false
	}
	return TokenUse{Kind: kind, Namespace: ns, Name: name}, true
}
