// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"slices"
	"strings"

	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// applyServed sets what the running members serve (live mode) against what the spec says. The
// keys they serve replace the spec's when the spec's signing key is not among them: the members
// verify their JWKS, whatever the <cluster>-sa Secret holds, and a machine the roll adds signs
// with the Secret's key. An issuer or audiences other than the spec's are noted.
func applyServed(p *Plane, served []input.Served) {
	var common []string
	read := 0
	for _, sv := range served {
		if sv.Issuer != "" && !slices.Contains(p.Creds.Issuers, sv.Issuer) && p.Rewrite == nil {
			p.Notes = append(p.Notes, "member "+sv.Member+" serves issuer "+sv.Issuer+", the spec says "+p.Creds.primary())
		}
		if sv.Audiences != nil && !slices.Equal(sorted(sv.Audiences), sorted(p.Creds.Audiences)) {
			p.Notes = append(p.Notes, "member "+sv.Member+" runs --api-audiences "+strings.Join(sv.Audiences, ",")+
				", the spec says "+strings.Join(p.Creds.Audiences, ","))
		}
		if sv.KeyIDs == nil {
			continue
		}
		kids := make([]string, len(sv.KeyIDs))
		for i, k := range sv.KeyIDs {
			kids[i] = "kid:" + k
		}
		if read == 0 {
			common = kids
		} else {
			common = slices.DeleteFunc(common, func(k string) bool { return !slices.Contains(kids, k) })
		}
		read++
	}
	switch {
	case read == 0 || slices.Contains(common, p.Creds.Signing):
		return
	case len(common) == 0:
		p.Notes = append(p.Notes, "the members' JWKS share no key (credwatch check shows the drift): keys compared as the spec says")
		return
	}
	// A member signs with a key of its JWKS; which one it does not say: the first common one.
	p.LiveKeys = true
	for _, c := range []*Creds{&p.Creds, &p.JoinCreds} {
		c.Signing, c.Verify = common[0], slices.Clone(common)
	}
	for i := range p.Members {
		p.Members[i].Creds = p.Creds
	}
}
