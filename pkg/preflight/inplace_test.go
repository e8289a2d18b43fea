// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// TestInPlaceUpdate: in-place-update-possible only when KubeadmControlPlane's manager runs with
// the gate, exactly one ExtensionConfig serves CanUpdateMachine, the release has in-place
// updates, the roll is a spec change (not rolloutAfter) and some machine is updated rather than
// added or removed; otherwise a note says why not, or nothing when nothing asks for it. The same
// with the objects written at v1beta2.
func TestInPlaceUpdate(t *testing.T) {
	dir := filepath.Join("testdata", "kcp-in-place")
	cur, err := os.ReadFile(filepath.Join(dir, "current.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := os.ReadFile(filepath.Join(dir, "planned.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	secondExtension := "\n---\napiVersion: runtime.cluster.x-k8s.io/v1alpha1\nkind: ExtensionConfig\nmetadata: {name: other}\nstatus:\n  handlers:\n  - name: can-update-machine.other\n    requestHook: {apiVersion: hooks.runtime.cluster.x-k8s.io/v1alpha1, hook: CanUpdateMachine}\n"
	for _, tc := range []struct {
		name      string
		edit      func(string) string // applied to both sides
		planned   func(string) string // applied to the planned side after edit
		capi      string
		want      string // a phrase of the finding; "" for none
		note      string // a phrase of a note when there is no finding
		notInputs bool   // no note either: nothing in the inputs asks for in-place updates
	}{
		{name: "gate and one extension", want: "may update 2 of the 3 rolled machines in place"},
		{name: "maxSurge 0", edit: func(s string) string {
			return strings.Replace(s, "  replicas: 3\n", "  replicas: 3\n  rolloutStrategy:\n    rollingUpdate:\n      maxSurge: 0\n", 1)
		}, want: "may update 3 of the 3 rolled machines in place"},
		{name: "gate as a separate argument", edit: func(s string) string {
			return strings.Replace(s, "- --feature-gates=ClusterTopology", "- --feature-gates\n        - ClusterTopology", 1)
		}, want: "may update 2 of the 3"},
		{name: "two extensions", edit: func(s string) string { return s + secondExtension }, want: "2 ExtensionConfigs serve CanUpdateMachine (in-place-updater, other)"},
		{name: "gate off", edit: func(s string) string { return strings.Replace(s, "InPlaceUpdates=true", "InPlaceUpdates=false", 1) }, note: "runs without --feature-gates=InPlaceUpdates=true"},
		{name: "gate not named (off by default)", edit: func(s string) string { return strings.Replace(s, ",InPlaceUpdates=true", "", 1) }, note: "runs without --feature-gates=InPlaceUpdates=true"},
		{name: "manager not in the inputs", edit: func(s string) string { return cut(s, "kind: Deployment") }, note: "feature gates are unknown: in-place-update-possible not judged"},
		{name: "no extension in the inputs", edit: func(s string) string { return cut(s, "kind: ExtensionConfig") }, note: "no ExtensionConfig among the inputs serves CanUpdateMachine"},
		{name: "extension without the hook", edit: func(s string) string {
			return strings.Replace(s, "hook: CanUpdateMachine\n", "hook: BeforeClusterUpgrade\n", 1)
		}, note: "no ExtensionConfig among the inputs serves CanUpdateMachine"},
		{name: "neither", edit: func(s string) string { return cut(cut(s, "kind: ExtensionConfig"), "kind: Deployment") }, notInputs: true},
		{name: "release without in-place updates", capi: "v1.11.3", note: "has no in-place updates"},
		{name: "one replica, maxSurge 1", edit: func(s string) string { return strings.Replace(s, "  replicas: 3\n", "  replicas: 1\n", 1) }, note: "updates none in place"},
		{name: "rolloutAfter", planned: func(s string) string {
			return strings.Replace(strings.Replace(s, "version: v1.36.3", "version: v1.35.4", 1), "  replicas: 3\n", "  replicas: 3\n  rolloutAfter: \"2026-12-07T00:00:00Z\"\n", 1)
		}, note: "started by rolloutAfter"},
	} {
		for _, v1beta2 := range []bool{false, true} {
			name := tc.name
			if v1beta2 {
				name += "/v1beta2"
			}
			t.Run(name, func(t *testing.T) {
				c, p := string(cur), string(pl)
				if tc.edit != nil {
					c, p = tc.edit(c), tc.edit(p)
				}
				if tc.planned != nil {
					p = tc.planned(p)
				}
				cs, ps := setOf(t, "current.yaml", c, v1beta2), setOf(t, "planned.yaml", p, v1beta2)
				r, err := preflight.Run(preflight.Config{Current: cs, Planned: ps, CAPIVersion: tc.capi})
				if err != nil {
					t.Fatal(err)
				}
				i := slices.IndexFunc(r.Findings, func(f finding.Finding) bool { return f.ID == "in-place-update-possible" })
				switch {
				case tc.want != "":
					if i < 0 || !strings.Contains(r.Findings[i].Message, tc.want) {
						t.Errorf("findings %v, want in-place-update-possible saying %q", ids(r.Findings), tc.want)
					}
				case i >= 0:
					t.Errorf("in-place-update-possible raised: %s", r.Findings[i].Message)
				}
				inPlaceNote := slices.ContainsFunc(r.Notes, func(n string) bool {
					return strings.Contains(n, "in place") || strings.Contains(n, "CanUpdateMachine") || strings.Contains(n, "in-place")
				})
				if tc.note != "" && !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, tc.note) }) {
					t.Errorf("notes %q, want one saying %q", r.Notes, tc.note)
				}
				if tc.notInputs && inPlaceNote {
					t.Errorf("notes %q speak of in-place updates nothing asked for", r.Notes)
				}
			})
		}
	}
}

// cut drops the YAML document of s that contains marker.
func cut(s, marker string) string {
	docs := strings.Split(s, "\n---\n")
	docs = slices.DeleteFunc(docs, func(d string) bool { return strings.Contains(d, marker) })
	return strings.Join(docs, "\n---\n")
}

// setOf reads data as the file name, its Cluster API objects rewritten at v1beta2 when v1beta2.
func setOf(t *testing.T, name, data string, v1beta2 bool) *input.Set {
	t.Helper()
	if v1beta2 {
		data = string(toV1Beta2(t, []byte(data)))
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := input.Load(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
