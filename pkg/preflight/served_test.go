// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// TestLiveSide: what a live read adds to the current side (the members' served issuer,
// audiences and JWKS; a roll of the current spec) and what it predicts.
func TestLiveSide(t *testing.T) {
	const dir = "testdata/kcp-rollout-after/"
	secretKid := func(t *testing.T) string {
		s, err := input.Load(t.Context(), dir+"current.yaml")
		if err != nil || len(s.SASecrets) != 1 {
			t.Fatalf("%v %+v", err, s)
		}
		return s.SASecrets[0].KeyID
	}
	tests := []struct {
		name    string
		served  func(kid string) []input.Served
		planned string // "" for a roll of the current spec
		want    []string
		message string // in the sa-key-change finding
		note    string // in the report's notes
	}{
		{name: "reroll, nothing served", want: []string{"no-change", "rollout-planned"}},
		{name: "reroll, members serve the Secret's key", served: func(kid string) []input.Served {
			return []input.Served{{Member: "m1", KeyIDs: []string{"old", kid}}, {Member: "m2", KeyIDs: []string{kid}}}
		}, want: []string{"no-change", "rollout-planned"}},
		{name: "reroll, members serve another key", served: func(string) []input.Served {
			return []input.Served{{Member: "m1", KeyIDs: []string{"drifted"}}, {Member: "m2"}}
		}, want: []string{"rollout-planned", "sa-key-change"},
			message: "The lab-sa Secret's key (kid:%s) is not in the members' live JWKS (kid:drifted)"},
		{name: "planned files, members serve another key", planned: dir + "planned.yaml", served: func(string) []input.Served {
			return []input.Served{{Member: "m1", KeyIDs: []string{"drifted"}}}
		}, want: []string{"rollout-planned", "sa-key-change"}, message: "not in the members' live JWKS"},
		{name: "members share no key", served: func(string) []input.Served {
			return []input.Served{{Member: "m1", KeyIDs: []string{"a"}}, {Member: "m2", KeyIDs: []string{"b"}}}
		}, want: []string{"no-change", "rollout-planned"}, note: "share no key"},
		{name: "served issuer and audiences differ", served: func(string) []input.Served {
			return []input.Served{{Member: "m1", Issuer: "https://other", Audiences: []string{"x"}}}
		}, want: []string{"no-change", "rollout-planned"}, note: "member m1 serves issuer https://other"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cur, err := input.Load(t.Context(), dir+"current.yaml")
			if err != nil {
				t.Fatal(err)
			}
			kid := secretKid(t)
			if tc.served != nil {
				cur.Served = tc.served(kid)
			}
			cur.Notes = []string{"from the reader"}
			cfg := preflight.Config{Current: cur, CAPIVersion: "v1.8.4", Reroll: tc.planned == ""}
			if tc.planned != "" {
				if cfg.Planned, err = input.Load(t.Context(), tc.planned); err != nil {
					t.Fatal(err)
				}
			}
			r, err := preflight.Run(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(r.Findings); !slices.Equal(got, tc.want) {
				t.Errorf("findings %v, want %v", got, tc.want)
			}
			if tc.planned == "" && (r.Planned.Files[0] != "the current spec, rolled again" || len(r.Steps) != 2*len(r.Current.Members) || !slices.ContainsFunc(r.Findings, func(f finding.Finding) bool {
				return f.ID == "rollout-planned" && strings.Contains(f.Message, preflight.Reroll)
			})) {
				t.Errorf("a roll of the current spec: %d steps, findings %+v", len(r.Steps), r.Findings)
			}
			if tc.message != "" {
				msg := strings.ReplaceAll(tc.message, "%s", kid)
				if i := slices.IndexFunc(r.Findings, func(f finding.Finding) bool { return f.ID == "sa-key-change" }); i < 0 || !strings.Contains(r.Findings[i].Message, msg) {
					t.Errorf("sa-key-change lacks %q: %+v", msg, r.Findings)
				}
			}
			notes := strings.Join(r.Notes, "\n")
			if !strings.Contains(notes, "from the reader") || !strings.Contains(notes, tc.note) {
				t.Errorf("notes %q, want the reader's and %q", r.Notes, tc.note)
			}
		})
	}
	if _, err := preflight.Run(preflight.Config{Current: &input.Set{}, Planned: &input.Set{}, Reroll: true}); err == nil {
		t.Error("a roll of the current spec with a planned side: no error")
	}
}
