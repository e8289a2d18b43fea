// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// TestSASecretAbsent: a live read that finds no <cluster>-sa Secret predicts what the Cluster API
// version will do with the roll: a new key up to v1.12 (sa-key-change follows), a roll that
// stops from v1.13 on (no key change), both outcomes named when the version is unknown.
func TestSASecretAbsent(t *testing.T) {
	set, err := input.Load(context.Background(), "testdata/kcp-rollout-after/current.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.KCPs) != 1 || len(set.SASecrets) != 1 {
		t.Fatalf("testdata: %d KCPs, %d sa Secrets", len(set.KCPs), len(set.SASecrets))
	}
	name := set.SASecrets[0].Name
	set.SASecrets = nil
	set.Absent = []string{"Secret/" + name}
	for _, tc := range []struct {
		capi     string
		want     []string // IDs that must be there
		not      []string // IDs that must not
		msgParts []string // in sa-secret-missing's message
	}{
		{"v1.14.2", []string{"sa-secret-missing", "rollout-planned"}, []string{"sa-key-change"}, []string{"no longer regenerates", "Cluster certificate for sa is not available"}},
		{"v1.13.0", []string{"sa-secret-missing"}, []string{"sa-key-change"}, []string{"no longer regenerates"}},
		{"v1.12.3", []string{"sa-secret-missing", "sa-key-change"}, nil, []string{"generates a new service-account key pair"}},
		{"v1.8.1", []string{"sa-secret-missing", "sa-key-change"}, nil, []string{"generates a new service-account key pair"}},
		{"", []string{"sa-secret-missing"}, nil, []string{"version is unknown", "up to v1.12", "from v1.13 on"}},
	} {
		r, err := preflight.Run(preflight.Config{Current: set, Reroll: true, CAPIVersion: tc.capi})
		if err != nil {
			t.Fatalf("%s: %v", tc.capi, err)
		}
		ids := r.IDs()
		for _, id := range tc.want {
			if !slices.Contains(ids, id) {
				t.Errorf("Cluster API %q: findings %v lack %s", tc.capi, ids, id)
			}
		}
		for _, id := range tc.not {
			if slices.Contains(ids, id) {
				t.Errorf("Cluster API %q: findings %v have %s", tc.capi, ids, id)
			}
		}
		for _, f := range r.Findings {
			if f.ID != "sa-secret-missing" {
				continue
			}
			for _, p := range tc.msgParts {
				if !strings.Contains(f.Message, p) {
					t.Errorf("Cluster API %q: sa-secret-missing %q lacks %q", tc.capi, f.Message, p)
				}
			}
		}
	}
	// Files never say a Secret is absent: without it in the input, nothing is claimed.
	set.Absent = nil
	r, err := preflight.Run(preflight.Config{Current: set, Reroll: true, CAPIVersion: "v1.14.2"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(r.IDs(), "sa-secret-missing") {
		t.Errorf("no Absent: findings %v have sa-secret-missing", r.IDs())
	}
}
