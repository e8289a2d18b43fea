// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"strings"
	"testing"
)

// TestIssuerLookalike: a finding that compares a planned issuer with the current or the join
// one says where they differ when they display alike.
func TestIssuerLookalike(t *testing.T) {
	const svc = "https://kubernetes.default.svc"
	cyr := "https://kubernetes.dеfault.svc" // Cyrillic е
	tests := []struct {
		name string
		f    *facts
		run  check
		want string // "" : no note
	}{
		{"switch, homoglyph", &facts{cur: &Plane{Creds: Creds{Issuers: []string{svc}}}, pl: &Plane{Creds: Creds{Issuers: []string{cyr}}}},
			issuerSwitch, `differ at byte 20 (U+0435 vs 'e')`},
		{"switch, zero-width", &facts{cur: &Plane{Creds: Creds{Issuers: []string{svc}}}, pl: &Plane{Creds: Creds{Issuers: []string{svc + "\u200b"}}}},
			issuerSwitch, `differ at byte 30 (U+200B vs the end)`},
		{"switch, a real change", &facts{cur: &Plane{Creds: Creds{Issuers: []string{svc}}}, pl: &Plane{Creds: Creds{Issuers: []string{"https://oidc.example"}}}},
			issuerSwitch, ""},
		{"join differs, homoglyph", &facts{cur: &Plane{}, pl: &Plane{Creds: Creds{Issuers: []string{svc}}, JoinCreds: Creds{Issuers: []string{cyr}}}},
			issuerJoinDiffers, `differ at byte 20 ('e' vs U+0435)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := tt.run(tt.f)
			if len(fs) != 1 {
				t.Fatalf("findings %+v, want one", fs)
			}
			if got := fs[0].Message; tt.want == "" && strings.Contains(got, "look alike") || !strings.Contains(got, tt.want) {
				t.Errorf("message %q, want it to say %q", got, tt.want)
			}
		})
	}
}
