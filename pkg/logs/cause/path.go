// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cause

import (
	"slices"
	"strings"
)

// Unknown is an answer (issue 26): a failure on the credential path that no catalogue message
// names is reported as unknown, with the family of failures it is nearest and the words that put
// it on the path, so that an operator — and the next corpus update — sees it. A line that only
// mentions a credential word, or that logs no failure, is never forced into a cause.

// PathAnchors are the words that let a line through the reader's gate to the classifier when it
// holds no catalogue message: the strongest of the families' words.
var PathAnchors = []string{"Unauthorized", "Unauthenticated", "unauthenticated", "AADSTS", "invalid_grant",
	"invalid_client", "AccessDenied", "credential", "Credential", "oidc", "OIDC", "token", "Token",
	"jwt_authn_access_denied{", "UNAUTHENTICATED", "certificate", "certify", "login", "Jwt authentication"}

// jwt_authn_access_denied{ stands for Envoy's access-log details (one anchor, not eight), UNAUTHENTICATED
// for gRPC Java's status (a proxyless client told so by istiod's CA).
// (Every anchor is 4 bytes or more: the gate's SIMD scan needs it; JWT-library lines hold "token".
// "unauthorized" and "x509: " are family words but not anchors: their fingerprints are common
// enough in logs to slow the gate's scan by a third, measured leaving each anchor out on a 200 MB dense log.
// "certificate", "certify" (Linkerd's "Failed to certify identity"), "login" (Consul's and Vault's
// login failures) and Envoy's "Jwt authentication" were added for issue 43's consumers: with them
// the scan passes 0.175 % of a dense log's positions to the exact check instead of 0.186 %, and
// 0.83 % of the lab captures' instead of 1.00 %. What a word costs depends on the Teddy buckets
// it lands in with the others, not on the word alone: with "Login" and "Jwks" besides, the dense
// figure was 0.241 %; with "Login", "jwks", "Jwks" and "JWKS" 0.323 %.)

// A Family is a kind of credential failure, named by its words.
type Family struct {
	Name  string
	Words []string
}

// Families are the kinds of credential failure the catalogue's causes fall into, in the order
// that breaks a tie.
var Families = []Family{
	{"service-account tokens", []string{"bearer token", "service account token", "serviceaccounts/token", "TokenRequest",
		"TokenReview", "tokenreview", "projected token", "token", "Token"}},
	{"JWT and OIDC libraries", []string{"jwt", "Jwt", "JWT", "oidc", "OIDC", "id token", "ID token", "jwks", "Jwks", "JWKS", "signature",
		`"aud"`, `"iss"`, "(exp)", "(iat)", "(nbf)"}},
	{"cloud credentials", []string{"AADSTS", "oauth2", "invalid_grant", "invalid_client", "sts:", "sts.", "AssumeRole",
		"AccessDenied", "credential", "Credential", "password", "login", "Login"}},
	{"certificates", []string{"x509: ", "tls: ", "certificate", "certify"}},
	{"authentication", []string{"Unauthorized", "unauthorized", "Unauthenticated", "unauthenticated", "UNAUTHENTICATED", "authentication failed",
		"Authentication failed", "failed to authenticate", " 401 ", ": 401", "=401"}},
}

// failureWords say a line reports a failure, not a state.
var failureWords = []string{"error", "Error", "ERROR", "fail", "Fail", "FAIL", "unable", "Unable", "cannot", "Cannot",
	"can't", "invalid", "Invalid", "denied", "Denied", "rejected", "refused", "expired", "Unauthorized", "unauthorized",
	"Unauthenticated", "unauthenticated", " 401 ", ": 401", "=401", "not authorized"}

// Nearest names the family text is nearest and the words of it text holds; ok is false when text
// holds no family's word. The family with the most distinct words wins; a tie goes to the
// earlier family.
func Nearest(text string) (family string, words []string, ok bool) {
	best := -1
	for i, f := range Families {
		var hit []string
		for _, w := range f.Words {
			if strings.Contains(text, w) {
				hit = append(hit, strings.TrimSpace(w))
			}
		}
		// A word inside another that matched says nothing more ("token" in "bearer token").
		all := slices.Clone(hit)
		hit = slices.DeleteFunc(hit, func(w string) bool {
			return slices.ContainsFunc(all, func(h string) bool { return h != w && strings.Contains(h, w) })
		})
		if len(hit) > 0 && (best < 0 || len(hit) > len(words)) {
			best, words = i, hit
		}
	}
	if best < 0 {
		return "", nil, false
	}
	return Families[best].Name, words, true
}

// onPath reports whether text, which no catalogue message matched, logs a failure on the
// credential path: it holds a failure word and a family's word. (A line that only quotes one —
// at info or below, or saying it succeeded — is then dropped by quotesOnly, like a named cause.)
func onPath(text string) bool {
	failed := false
	for _, w := range failureWords {
		if strings.Contains(text, w) {
			failed = true
			break
		}
	}
	if !failed {
		return false
	}
	_, _, ok := Nearest(text)
	return ok
}
