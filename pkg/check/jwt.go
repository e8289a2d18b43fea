// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"strings"

	"github.com/credwatch/credwatch/pkg/token"
)

// tokenInfo is what the check needs from a JWT without verifying it. The signature is never kept.
type tokenInfo struct {
	KID       string
	Issuer    string
	Subject   string
	Audiences []string
	Exp       int64
	Legacy    bool // no aud/exp: a secret-based token
}

// decodeToken reads the header and payload of a compact JWS without verifying it (pkg/token).
func decodeToken(raw string) (tokenInfo, error) {
	t, err := token.Decode(raw)
	if err != nil {
		return tokenInfo{}, err
	}
	c := t.Claims
	ti := tokenInfo{KID: t.Header.KeyID, Issuer: c.Issuer, Subject: c.Subject, Audiences: c.Audience}
	if c.Expiry != nil {
		ti.Exp = *c.Expiry
	}
	ti.Legacy = len(c.Audience) == 0 && c.Expiry == nil
	return ti, nil
}

// summary describes a token for people: issuer, subject, key ID and audiences, never the token.
func (t tokenInfo) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "iss=%s sub=%s kid=%s", t.Issuer, t.Subject, shortKID(t.KID))
	if len(t.Audiences) > 0 {
		fmt.Fprintf(&b, " aud=%s", strings.Join(t.Audiences, ","))
	}
	if t.Legacy {
		b.WriteString(" (legacy, no expiry)")
	}
	return b.String()
}

// shortKID abbreviates a 43-character key ID for tables.
func shortKID(kid string) string {
	if len(kid) > 12 {
		return kid[:12] + "…"
	}
	if kid == "" {
		return "-"
	}
	return kid
}

func indexFold(s, sub string) int {
	return strings.Index(strings.ToLower(s), strings.ToLower(sub))
}
