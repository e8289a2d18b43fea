// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/report"
)

// Times are a token's time claims in UTC.
type Times struct {
	IssuedAt  *time.Time `json:"issuedAt,omitempty"`
	NotBefore *time.Time `json:"notBefore,omitempty"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	WarnAfter *time.Time `json:"warnAfter,omitempty"`
	// LifetimeSeconds is exp − iat as written in the JWT.
	LifetimeSeconds int64 `json:"lifetimeSeconds,omitempty"`
	// Expired and NotYetValid are judged at At with kube-apiserver's 60-s leeway.
	Expired     bool `json:"expired"`
	NotYetValid bool `json:"notYetValid"`
}

// Inspection is what `credwatch token inspect` reports: the decoded header and claims (never the
// signature), the token's type and binding, its times and the kubelet's refresh schedule.
type Inspection struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Source     string         `json:"source"`
	At         time.Time      `json:"at"`
	Header     Header         `json:"header"`
	Claims     map[string]any `json:"claims"`
	Type       string         `json:"type"`
	Binding    *Binding       `json:"binding,omitempty"`
	Times      Times          `json:"times"`
	// CredentialID is the token's jti as kube-apiserver writes it in audit logs ("JTI=<jti>",
	// k8s.io/apiserver@kubernetes-1.36.3 pkg/authentication/token/jwt/jwt.go:21-26): the
	// issued-credential-id annotation of the TokenRequest that minted it and the user.extra
	// credential-id of each request it authenticated.
	CredentialID string   `json:"credentialID,omitempty"`
	Refresh      *Refresh `json:"kubeletRefresh,omitempty"`
	Notes        []string `json:"notes,omitempty"`
}

// Inspect describes t as of at.
func Inspect(t *Token, source string, at time.Time) Inspection {
	in := Inspection{APIVersion: report.APIVersion, Kind: "TokenInspection", Source: source, At: at.UTC(),
		Header: t.Header, Claims: t.RawClaims}
	in.Type, in.Binding = t.Classify()
	if jti, _ := t.RawClaims["jti"].(string); jti != "" {
		in.CredentialID = "JTI=" + jti
	}
	c := t.Claims
	tp := func(n *int64) *time.Time {
		if n == nil {
			return nil
		}
		x := Time(n)
		return &x
	}
	in.Times = Times{IssuedAt: tp(c.IssuedAt), NotBefore: tp(c.NotBefore), ExpiresAt: tp(c.Expiry)}
	if c.Kubernetes != nil {
		in.Times.WarnAfter = tp(c.Kubernetes.WarnAfter)
	}
	if c.IssuedAt != nil && c.Expiry != nil {
		in.Times.LifetimeSeconds = *c.Expiry - *c.IssuedAt
	}
	in.Times.Expired = c.Expiry != nil && at.Add(-Leeway).After(Time(c.Expiry))
	in.Times.NotYetValid = (c.NotBefore != nil && at.Add(Leeway).Before(Time(c.NotBefore))) ||
		(c.IssuedAt != nil && at.Add(Leeway).Before(Time(c.IssuedAt)))
	if r, ok := t.KubeletRefresh(at); ok {
		in.Refresh = &r
	}
	switch in.Type {
	case TypeLegacy:
		in.Notes = append(in.Notes, "secret-based token signed by kube-controller-manager (--service-account-private-key-file): no exp, valid until its Secret or service account is deleted or the key is dropped")
	case TypeOther:
		in.Notes = append(in.Notes, "not a Kubernetes service-account token (no kubernetes.io claim and iss is not kubernetes/serviceaccount); kube-apiserver's service-account authenticators would skip it")
	case TypeBound:
		if in.Binding.BoundTo == "" {
			in.Notes = append(in.Notes, "TokenRequest token bound to no object (e.g. kubectl create token): valid until exp unless the service account is deleted")
		}
	}
	if r := in.Refresh; r != nil && r.Extended {
		in.Notes = append(in.Notes, fmt.Sprintf("extended expiry: the kubelet asked for %ds and kube-apiserver (--service-account-extend-token-expiration) wrote exp %s later; after warnafter every use counts as stale (serviceaccount_stale_tokens_total, audit annotation authentication.k8s.io/stale-token) but is still accepted until exp",
			r.ExpirationSeconds, report.Duration(time.Duration(in.Times.LifetimeSeconds)*time.Second)))
	}
	return in
}

// WriteTable renders the inspection for people.
func (in Inspection) WriteTable(w io.Writer, _ report.TableOptions) error {
	tw := report.NewTabWriter(w)
	row := func(k, v string) { report.Row(tw, k+":", v) }
	at := in.At
	when := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format(time.RFC3339) + " (" + report.Relative(*t, at) + ")"
	}
	row("Source", Printable(in.Source))
	row("Type", describeType(in.Type, in.Binding))
	if b := in.Binding; b != nil {
		row("Service account", fmt.Sprintf("%s/%s (uid %s)", Printable(b.Namespace), Printable(b.ServiceAccount.Name), dash(b.ServiceAccount.UID)))
	}
	row("Header", fmt.Sprintf("alg %s, kid %s, typ %s", in.Header.Algorithm, dash(in.Header.KeyID), dash(in.Header.Type)))
	row("Issuer", dash(str(in.Claims["iss"])))
	row("Subject", dash(str(in.Claims["sub"])))
	row("Audiences", dash(strings.Join(audList(in.Claims["aud"]), ", ")))
	if id := str(in.Claims["jti"]); id != "" {
		row("JTI", Printable(id))
	}
	if in.CredentialID != "" {
		row("Credential ID", Printable(in.CredentialID)+" (as audit logs record it)")
		row("Trace", "credwatch logs --trace-credential "+Printable(in.CredentialID)+" MEMBER-AUDIT-LOG... (the member that issued it, where it was used)")
	}
	row("Issued", when(in.Times.IssuedAt))
	if in.Times.NotBefore != nil && (in.Times.IssuedAt == nil || !in.Times.NotBefore.Equal(*in.Times.IssuedAt)) {
		row("Not before", when(in.Times.NotBefore))
	}
	exp := when(in.Times.ExpiresAt)
	if in.Times.LifetimeSeconds > 0 {
		exp += "; lifetime " + report.Duration(time.Duration(in.Times.LifetimeSeconds)*time.Second)
	}
	if in.Times.Expired {
		exp += "; EXPIRED (beyond the 60s leeway)"
	}
	row("Expires", exp)
	if in.Times.NotYetValid {
		row("Validity", "NOT VALID YET at the reference time (beyond the 60s leeway): issuer clock ahead?")
	}
	if in.Times.WarnAfter != nil {
		row("Warn after", when(in.Times.WarnAfter))
	}
	if r := in.Refresh; r != nil {
		state := "pending"
		if r.Due {
			state = "due: a running kubelet has already replaced it"
		}
		why := "24h maximum token age"
		if r.Reason != "24h maximum age" {
			why = fmt.Sprintf("80%% of the %ds the kubelet requested", r.ExpirationSeconds)
		}
		row("Kubelet refresh", fmt.Sprintf("%s; %s; %s", when(&r.RefreshAt), why, state))
		if r.Extended {
			stale := "not stale yet"
			if r.Stale {
				stale = "STALE: used after warnafter, counted in serviceaccount_stale_tokens_total"
			}
			row("Stale", stale)
		}
	}
	row("Reference time", at.UTC().Format(time.RFC3339))
	for i, n := range in.Notes {
		k := ""
		if i == 0 {
			k = "Notes"
		}
		report.Row(tw, k+":", n)
	}
	return tw.Flush()
}

func describeType(typ string, b *Binding) string {
	switch typ {
	case TypeLegacy:
		s := "legacy secret-based service-account token"
		if b != nil && b.Secret != "" {
			s += fmt.Sprintf(" (secret %s/%s)", Printable(b.Namespace), Printable(b.Secret))
		}
		return s
	case TypeOther:
		return "not a service-account token"
	}
	if b == nil || b.BoundTo == "" {
		return "bound service-account token (no bound object)"
	}
	path := Printable(b.Object.Name)
	if b.BoundTo != "node" {
		path = Printable(b.Namespace) + "/" + path
	}
	s := fmt.Sprintf("bound to %s %s (uid %s)", b.BoundTo, path, dash(b.Object.UID))
	if b.Node != nil {
		s += fmt.Sprintf(", on node %s", Printable(b.Node.Name))
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return Printable(s)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func audList(v any) []string {
	switch a := v.(type) {
	case string:
		return []string{Printable(a)}
	case []any:
		out := make([]string, 0, len(a))
		for _, e := range a {
			out = append(out, Printable(str(e)))
		}
		return out
	}
	return nil
}
