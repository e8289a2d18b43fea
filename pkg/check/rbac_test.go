// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/credwatch/credwatch/pkg/cloud"
)

// TestManifest: what deploy/clusterrole.yaml grants, rule by rule. Secret reads are opt-in and
// no name-restricted rule applies cluster-wide by default; the opt-ins cover what check reads.
func TestManifest(t *testing.T) {
	m := applyManifest(t, fake.NewClientset())
	grants := func(rules []rbacv1.PolicyRule, verb, res string) (names []string, all bool) {
		for _, r := range rules {
			if slices.Contains(r.Verbs, verb) && slices.Contains(r.Resources, res) {
				if len(r.ResourceNames) == 0 {
					all = true
				}
				names = append(names, r.ResourceNames...)
			}
		}
		return names, all
	}
	role := func(ns string) []rbacv1.PolicyRule {
		for _, r := range m.roles {
			if r.Namespace == ns && r.Name == "credwatch-check" {
				return r.Rules
			}
		}
		t.Fatalf("no Role credwatch-check in %s", ns)
		return nil
	}
	tests := []struct {
		name string
		ok   func() bool
	}{
		{"credwatch-check reads no Secret", func() bool {
			for _, v := range []string{"get", "list", "watch"} {
				if n, all := grants(m.clusterRoles["credwatch-check"].Rules, v, "secrets"); all || len(n) > 0 {
					return false
				}
			}
			return true
		}},
		{"credwatch-check has no name-restricted rule (it would apply in every namespace)", func() bool {
			for _, r := range m.clusterRoles["credwatch-check"].Rules {
				if len(r.ResourceNames) > 0 {
					return false
				}
			}
			return true
		}},
		{"credwatch-legacy-tokens grants list secrets and nothing else", func() bool {
			r := m.clusterRoles["credwatch-legacy-tokens"].Rules
			return len(r) == 1 && slices.Equal(r[0].Verbs, []string{"list"}) && slices.Equal(r[0].Resources, []string{"secrets"}) && len(r[0].ResourceNames) == 0
		}},
		{"credwatch-cloud-credentials covers pkg/cloud.WellKnown, by name only", func() bool {
			rules := m.clusterRoles["credwatch-cloud-credentials"].Rules
			for _, w := range cloud.WellKnown {
				res := map[cloud.SourceKind]string{cloud.SourceSecret: "secrets", cloud.SourceConfigMap: "configmaps"}[w.Kind]
				if names, all := grants(rules, "get", res); all || !slices.Contains(names, w.Name) {
					t.Logf("get %s %s", res, w.Name)
					return false
				}
			}
			return true
		}},
		{"leases by name in kube-system", func() bool {
			names, all := grants(role("kube-system"), "get", "leases")
			return !all && len(names) == 3
		}},
		{"probe tokens by name in credwatch", func() bool {
			names, all := grants(role("credwatch"), "create", "serviceaccounts/token")
			return !all && slices.Equal(names, []string{"credwatch-probe"})
		}},
		{"every rule has a comment saying what it grants", func() bool {
			raw, err := os.ReadFile("../../deploy/clusterrole.yaml")
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(raw), "\n")
			for i, l := range lines {
				if strings.HasPrefix(l, "- apiGroups:") || strings.HasPrefix(l, "- nonResourceURLs:") {
					if i == 0 || !strings.HasPrefix(lines[i-1], "# ") {
						t.Logf("line %d: %s", i+1, l)
						return false
					}
				}
			}
			return true
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.ok() {
				t.Error("deploy/clusterrole.yaml does not")
			}
		})
	}
}
