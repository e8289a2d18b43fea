// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package finding

import (
	"reflect"
	"testing"
)

func TestCollapse(t *testing.T) {
	skip := func(check, reason string) Finding {
		f := New("check-skipped", "check "+check+" skipped: "+reason)
		f.Object = check
		return f
	}
	rbac := "trust-matrix: get probe service account credwatch/credwatch-probe: forbidden"
	tests := []struct {
		name string
		in   []Finding
		want []Group
	}{
		{"one reason, three checks", []Finding{skip("key-drift", rbac), skip("issuer-drift", rbac), skip("audience-drift", rbac), skip("nodes", "nodes: forbidden")},
			[]Group{
				{ID: "check-skipped", Severity: "info", Where: []string{"key-drift", "issuer-drift", "audience-drift"}, Count: 3,
					Message: "check key-drift, issuer-drift, audience-drift skipped: " + rbac},
				{ID: "check-skipped", Severity: "info", Where: []string{"nodes"}, Count: 1, Message: "check nodes skipped: nodes: forbidden"},
			}},
		{"different messages stay apart", []Finding{
			New("member-key-drift", "apiserver-2 signs with kid a").On("apiserver-2", ""),
			New("member-key-drift", "apiserver-3 signs with kid b").On("apiserver-3", "")},
			nil},
		{"no place", []Finding{New("member-key-drift", "two keys"), New("member-key-drift", "two keys")},
			[]Group{{ID: "member-key-drift", Severity: "error", Count: 2, Message: "two keys"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Collapse(tt.in)
			for i := range got {
				got[i].Remedy = ""
			}
			if tt.want == nil {
				if len(got) != len(tt.in) {
					t.Errorf("%d groups, want %d", len(got), len(tt.in))
				}
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
