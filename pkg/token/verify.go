// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/kubever"
)

// VerifyOptions is the configuration of the kube-apiserver whose verdict Verify reproduces.
type VerifyOptions struct {
	// Keys is the --service-account-key-file set (all files).
	Keys []keys.Key
	// Issuers are the --service-account-issuer values: the first signs, all are accepted.
	Issuers []string
	// APIAudiences are --api-audiences; empty means the issuers.
	APIAudiences []string
	// At is the validating member's clock.
	At time.Time
	// Version is the kube-apiserver line.
	Version kubever.Version
	// NoLegacyLookup is --service-account-lookup=false (default true).
	NoLegacyLookup bool
}

// Verdicts.
const (
	Accepted = "accepted"
	Rejected = "rejected"
)

// Step is one step of kube-apiserver's authentication as Verify followed it.
type Step struct {
	Name   string `json:"name"`
	Result string `json:"result"` // ok, failed, skipped, needs-cluster
	Detail string `json:"detail,omitempty"`
}

// Verdict is what the kube-apiserver line would decide about a token.
type Verdict struct {
	Verdict string `json:"verdict"`
	// Cause is a catalogue ID; empty when accepted.
	Cause string `json:"cause,omitempty"`
	// Message is the authenticator's error text (empty for the bare "invalid bearer token").
	Message string `json:"message"`
	// LogLine is the message part of kube-apiserver's log line for this request.
	LogLine string `json:"logLine,omitempty"`
	// LogSource is file:line of that log call on this line.
	LogSource string `json:"logSource,omitempty"`
	// Authenticator is the service-account authenticator that claimed the token: legacy or bound.
	Authenticator string `json:"authenticator,omitempty"`
	// KeyID is the kid of the key that verified the signature.
	KeyID string `json:"keyID,omitempty"`
	// NeedsCluster lists the lookups kube-apiserver would do next that only a cluster can answer.
	NeedsCluster []string `json:"needsCluster,omitempty"`
	Notes        []string `json:"notes,omitempty"`
	Steps        []Step   `json:"steps"`
}

// ErrNoIssuer is returned when VerifyOptions names no issuer (kube-apiserver requires one).
var ErrNoIssuer = errors.New("at least one issuer is required (kube-apiserver's --service-account-issuer)")

// ErrNoKeys is returned when VerifyOptions has no keys.
var ErrNoKeys = errors.New("at least one verification key is required (kube-apiserver's --service-account-key-file)")

var cat = catalogue.Default

// Verify reproduces kube-apiserver's service-account authentication of t (pkg/serviceaccount
// jwt.go AuthenticateToken, claims.go and legacy.go Validate) on line o.Version at time o.At.
func Verify(t *Token, o VerifyOptions) (Verdict, error) {
	if len(o.Issuers) == 0 {
		return Verdict{}, ErrNoIssuer
	}
	if len(o.Keys) == 0 {
		return Verdict{}, ErrNoKeys
	}
	if o.Version.IsZero() {
		o.Version = kubever.Newest
	}
	if o.At.IsZero() {
		o.At = time.Now()
	}
	if len(o.APIAudiences) == 0 {
		o.APIAudiences = o.Issuers
	}
	v := &verifier{t: t, o: o}
	return v.run(), nil
}

type verifier struct {
	t *Token
	o VerifyOptions
	d Verdict
}

func (v *verifier) step(name, result, format string, args ...any) {
	v.d.Steps = append(v.d.Steps, Step{Name: name, Result: result, Detail: fmt.Sprintf(format, args...)})
	// details quote token strings with %q or Printable, so they are safe for terminals
}

func (v *verifier) reject(cause, msg string) Verdict {
	v.d.Verdict, v.d.Cause, v.d.Message = Rejected, cause, msg
	v.d.LogLine, v.d.LogSource = LogLine(v.o.Version, msg)
	return v.d
}

func (v *verifier) run() Verdict {
	t, o := v.t, v.o
	iss := t.Claims.Issuer
	// The token union tries the legacy authenticator (issuer kubernetes/serviceaccount), then the
	// bound one (all issuers). Each silently skips a token whose unverified iss is not its own.
	legacy := iss == LegacyIssuer
	bound := false
	for _, i := range o.Issuers {
		if i == iss {
			bound = true
		}
	}
	switch {
	case legacy:
		v.d.Authenticator = "legacy"
		v.step("issuer", "ok", "iss %q: claimed by the legacy service-account authenticator", iss)
	case bound:
		v.d.Authenticator = "bound"
		v.step("issuer", "ok", "iss %q is one of the accepted issuers", iss)
	default:
		v.step("issuer", "failed", "iss %q is not %q nor one of %s: every authenticator skips the token silently", iss, LegacyIssuer, quoteList(o.Issuers))
		return v.reject("issuer-not-accepted", "")
	}

	if msg, ok := v.signature(); !ok {
		return v.reject("signing-key-unknown", msg)
	}
	if msg, ok := v.audience(); !ok {
		return v.reject("audience-mismatch", msg)
	}
	if legacy {
		if cause, msg, ok := v.legacyClaims(); !ok {
			return v.reject(cause, msg)
		}
	} else {
		if cause, msg, ok := v.times(); !ok {
			return v.reject(cause, msg)
		}
		if k := t.Claims.Kubernetes; k == nil || k.ServiceAccount.Name == "" {
			// GetServiceAccount(ns, ""): the lister misses, the live GET of an empty name fails in
			// client-go, and that raw error is returned (claims.go Validate).
			v.step("lookups", "failed", "no kubernetes.io.serviceaccount.name claim: the service-account lookup of an empty name fails and its raw error is returned")
			return v.reject("token-claims-invalid", "resource name may not be empty")
		}
		v.boundLookups()
	}
	v.d.Verdict = Accepted
	return v.d
}

// signature follows key selection (kid-based since 1.31) and go-jose's verification.
func (v *verifier) signature() (string, bool) {
	t, o := v.t, v.o
	e := cat().MustGet("signing-key-unknown")
	candidates := o.Keys
	if o.Version.AtLeast(kubever.MustParse("1.31")) && t.Header.KeyID != "" {
		candidates = nil
		for _, k := range o.Keys {
			// kube-apiserver indexes its keys by the kid it derives, whatever a JWKS called them
			if kid, err := keys.KeyID(k.Public); err == nil && kid == t.Header.KeyID {
				candidates = append(candidates, k)
			}
		}
		if len(candidates) == 0 {
			v.step("key", "failed", "kid %s matches none of the %d configured keys (kid-based selection since 1.31)", Printable(t.Header.KeyID), len(o.Keys))
			return e.Format("no-keys-found", o.Version), false
		}
		v.step("key", "ok", "kid %s selects %d key(s)", Printable(t.Header.KeyID), len(candidates))
	} else if o.Version.AtLeast(kubever.MustParse("1.31")) {
		v.step("key", "ok", "no kid in the header: all %d keys are tried", len(candidates))
	} else {
		v.step("key", "ok", "%s tries all %d configured keys in order (no kid-based selection before 1.31)", o.Version, len(candidates))
	}
	if msg, ok := v.critical(); !ok {
		return msg, false
	}
	for _, k := range candidates {
		if verifySignature(t, k.Public) {
			v.d.KeyID = k.KeyID
			v.step("signature", "ok", "verified with key %s", k.KeyID)
			return "", true
		}
	}
	msg := e.Format("crypto", o.Version)
	detail := "no configured key verifies the signature"
	if len(candidates) < len(o.Keys) {
		detail = "the key with this kid does not verify the signature (token altered, or kid reused for another key)"
	}
	v.step("signature", "failed", "%s", detail)
	return msg, false
}

// supportedCritical is go-jose v2's set of crit names it understands (shared.go supportedCritical).
var supportedCritical = map[string]bool{"b64": true}

// critical is go-jose v2's check of the crit header before any signature (signing.go
// DetachedVerify, gopkg.in/go-jose/go-jose.v2 v2.6.3 lines 362-371, the same in
// gopkg.in/square/go-jose.v2 v2.6.0): a crit that is not a list of strings fails with its JSON
// error, a name other than b64 with ErrCryptoFailure. It fails alike for every key, so
// kube-apiserver's aggregate of the per-key errors reads as that one error.
func (v *verifier) critical() (string, bool) {
	if v.t.crit == nil {
		return "", true
	}
	var names []string
	if err := json.Unmarshal(v.t.crit, &names); err != nil {
		v.step("signature", "failed", "the crit header is not a list of strings: go-jose fails before checking the signature")
		return err.Error(), false
	}
	for _, n := range names {
		if !supportedCritical[n] {
			v.step("signature", "failed", "crit names %s, an extension go-jose does not understand: every key fails before the signature is checked", Printable(n))
			return cat().MustGet("signing-key-unknown").Format("crypto", v.o.Version), false
		}
	}
	return "", true
}

func (v *verifier) audience() (string, bool) {
	t, o := v.t, v.o
	tokenAuds := t.Claims.Audience
	if len(tokenAuds) == 0 {
		tokenAuds = o.APIAudiences
		v.d.Notes = append(v.d.Notes, "no aud claim: treated as a legacy token (audit annotation authentication.k8s.io/legacy-token, serviceaccount_legacy_tokens_total)")
	}
	for _, a := range tokenAuds {
		for _, b := range o.APIAudiences {
			if a == b {
				v.step("audience", "ok", "%q is an API audience", a)
				return "", true
			}
		}
	}
	v.step("audience", "failed", "token audiences %s share nothing with the API audiences %s", quoteList(tokenAuds), quoteList(o.APIAudiences))
	return cat().MustGet("audience-mismatch").Format("audiences", o.Version, tokenAuds, o.APIAudiences), false
}

// times is go-jose's Claims.Validate with the 60-s leeway: nbf, then exp, then iat.
func (v *verifier) times() (string, string, bool) {
	c, at, ver := v.t.Claims, v.o.At, v.o.Version
	if c.NotBefore != nil && at.Add(Leeway).Before(Time(c.NotBefore)) {
		v.step("time", "failed", "nbf %s is %s after the validating clock %s (leeway 60s)", fmtTime(Time(c.NotBefore)), Time(c.NotBefore).Sub(at).Round(time.Second), fmtTime(at))
		return "token-not-yet-valid", cat().MustGet("token-not-yet-valid").Format("nbf", ver), false
	}
	if c.Expiry != nil && at.Add(-Leeway).After(Time(c.Expiry)) {
		v.step("time", "failed", "exp %s is %s before the validating clock %s (leeway 60s)", fmtTime(Time(c.Expiry)), at.Sub(Time(c.Expiry)).Round(time.Second), fmtTime(at))
		return "token-expired", cat().MustGet("token-expired").Format("expired", ver), false
	}
	if c.IssuedAt != nil && at.Add(Leeway).Before(Time(c.IssuedAt)) {
		v.step("time", "failed", "iat %s is %s after the validating clock %s (leeway 60s)", fmtTime(Time(c.IssuedAt)), Time(c.IssuedAt).Sub(at).Round(time.Second), fmtTime(at))
		e := cat().MustGet("token-not-yet-valid")
		msg, ok := e.Spelling("iat", ver)
		if !ok {
			msg = e.Format("iat-unexpected", ver)
		}
		return "token-not-yet-valid", msg, false
	}
	v.step("time", "ok", "valid at %s (nbf, exp, iat with 60s leeway)", fmtTime(at))
	return "", "", true
}

func (v *verifier) boundLookups() {
	k := v.t.Claims.Kubernetes
	ns, sa := k.Namespace, k.ServiceAccount
	need := []string{fmt.Sprintf("serviceaccount %s/%s must exist with UID %s and not be deleted more than 60s ago (else the raw lookup error, e.g. serviceaccounts %q not found, or \"service account UID (...) does not match claim (%s)\")", ns, sa.Name, orNone(sa.UID), sa.Name, sa.UID)}
	obj := func(kind, path string, r *Ref) string {
		return fmt.Sprintf("%s %s must exist with UID %s and not be deleted more than 60s ago (else \"service account token has been invalidated\" or \"%s UID (...) does not match service account %s ref claim (%s)\")", kind, path, orNone(r.UID), kind, kind, r.UID)
	}
	switch {
	case k.Secret != nil:
		need = append(need, obj("secret", ns+"/"+k.Secret.Name, k.Secret))
	case k.Pod != nil:
		need = append(need, obj("pod", ns+"/"+k.Pod.Name, k.Pod))
	case k.Node != nil:
		need = append(need, obj("node", k.Node.Name, k.Node)+"; node binding needs ServiceAccountTokenNodeBindingValidation")
	}
	v.d.NeedsCluster = need
	v.step("lookups", "needs-cluster", "the validator looks up the service account and the bound object on every request")
	if w := k.WarnAfter; w != nil && *w != 0 && v.o.At.After(Time(w)) {
		v.d.Notes = append(v.d.Notes, fmt.Sprintf("stale: used %s after warnafter %s; kube-apiserver increments serviceaccount_stale_tokens_total and adds the audit annotation authentication.k8s.io/stale-token", v.o.At.Sub(Time(w)).Round(time.Second), fmtTime(Time(w))))
	}
}

var (
	dns1123Label     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// legacyClaims follows legacy.go Validate: claim checks, then (with lookup) cluster lookups.
func (v *verifier) legacyClaims() (string, string, bool) {
	c := v.t.Claims
	l := c.Legacy
	if l == nil {
		l = &LegacyClaims{}
	}
	e := cat().MustGet("token-claims-invalid")
	fail := func(key, what string) (string, string, bool) {
		v.step("legacy claims", "failed", "%s", what)
		return "token-claims-invalid", e.Format(key, v.o.Version), false
	}
	switch {
	case c.Subject == "":
		return fail("sub-missing", "no sub claim")
	case l.Namespace == "":
		return fail("namespace-missing", "no kubernetes.io/serviceaccount/namespace claim")
	case l.SecretName == "":
		return fail("secret-missing", "no kubernetes.io/serviceaccount/secret.name claim")
	case l.ServiceAccountName == "":
		return fail("sa-name-missing", "no kubernetes.io/serviceaccount/service-account.name claim")
	case l.ServiceAccountUID == "":
		return fail("sa-uid-missing", "no kubernetes.io/serviceaccount/service-account.uid claim")
	}
	parts := strings.Split(strings.TrimPrefix(c.Subject, "system:serviceaccount:"), ":")
	if !strings.HasPrefix(c.Subject, "system:serviceaccount:") || len(parts) != 2 ||
		len(parts[0]) > 63 || !dns1123Label.MatchString(parts[0]) || len(parts[1]) > 253 || !dns1123Subdomain.MatchString(parts[1]) ||
		parts[0] != l.Namespace || parts[1] != l.ServiceAccountName {
		return fail("sub-invalid", fmt.Sprintf("sub %q does not name service account %s/%s", c.Subject, l.Namespace, l.ServiceAccountName))
	}
	v.step("legacy claims", "ok", "sub, namespace, secret, service account name and UID present and consistent")
	v.d.Notes = append(v.d.Notes, "legacy tokens have no exp: kube-apiserver does no time checks on them")
	if v.o.NoLegacyLookup {
		v.step("lookups", "skipped", "--service-account-lookup=false: no lookups, the token works even if its Secret or service account is gone")
		return "", "", true
	}
	need := []string{
		fmt.Sprintf("secret %s/%s must exist, not be terminating, and its data.token must be exactly this token (else \"Token has been invalidated\" or \"Token does not match server's copy\")", l.Namespace, l.SecretName),
		fmt.Sprintf("serviceaccount %s/%s must exist with UID %s, not terminating (else the raw lookup error, \"ServiceAccount %s/%s has been deleted\" or \"ServiceAccount UID (...) does not match claim (%s)\")", l.Namespace, l.ServiceAccountName, l.ServiceAccountUID, l.Namespace, l.ServiceAccountName, l.ServiceAccountUID),
	}
	if v.o.Version.AtLeast(kubever.MustParse("1.29")) {
		need = append(need, fmt.Sprintf("secret %s/%s must not carry the label kubernetes.io/legacy-token-invalid-since (legacy-token-marked-invalid)", l.Namespace, l.SecretName))
	}
	v.d.NeedsCluster = need
	v.step("lookups", "needs-cluster", "--service-account-lookup=true (default): the Secret and service account are looked up")
	return "", "", true
}

// LogLine returns the message part of kube-apiserver's "Unable to authenticate the request" log
// line on line ver for an authenticator error msg ("" when no authenticator claimed the token),
// and the file:line it is logged from.
func LogLine(ver kubever.Version, msg string) (line, source string) {
	errText := "invalid bearer token"
	if msg != "" && msg != errText {
		errText = "[invalid bearer token, " + msg + "]"
	}
	switch {
	case !ver.AtLeast(kubever.MustParse("1.21")):
		return "Unable to authenticate the request due to an error: " + errText, "authentication.go:53"
	case !ver.AtLeast(kubever.MustParse("1.24")):
		source = "authentication.go:63"
	case !ver.AtLeast(kubever.MustParse("1.25")):
		source = "authentication.go:70"
	case !ver.AtLeast(kubever.MustParse("1.32")):
		source = "authentication.go:73"
	case !ver.AtLeast(kubever.MustParse("1.33")):
		source = "authentication.go:74"
	default:
		source = "authentication.go:75"
	}
	return `"Unable to authenticate the request" err=` + strconv.Quote(errText), source
}

func quoteList(ss []string) string { return fmt.Sprintf("%q", ss) }

func orNone(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
