// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capi_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab/capi"
)

// release writes what hack/labbin/build-capi.sh leaves for version under binDir, less skip (paths
// relative to the release directory).
func release(t *testing.T, binDir, version string, skip ...string) {
	t.Helper()
	files := map[string]os.FileMode{capi.ManifestsDone: 0o644, "clusterctl/clusterctl.cluster.x-k8s.io_providers.yaml": 0o644, "crds/cluster.x-k8s.io_machines.yaml": 0o644, "crds/cluster.x-k8s.io_clusters.yaml": 0o644}
	for _, m := range capi.ManagerNames() {
		files[m] = 0o755
		files["webhooks/"+m+".yaml"] = 0o644
	}
	for _, s := range skip {
		delete(files, s)
	}
	for name, mode := range files {
		p := filepath.Join(capi.Dir(binDir, version), name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFind(t *testing.T) {
	tests := []struct {
		name    string
		version string
		skip    []string
		chmod   string   // made non-executable
		wantErr []string // substrings of the error; none: Find succeeds
	}{
		{name: "complete v1.8.1", version: capi.V181},
		{name: "complete v1.8.4", version: capi.V184},
		{name: "unknown version", version: "v1.9.0", wantErr: []string{`"v1.9.0"`, "v1.8.1 v1.8.4"}},
		{name: "manager missing", version: capi.V181, skip: []string{capi.ControlPlaneManager},
			wantErr: []string{"v1.8.1 kubeadm-control-plane-controller not found at", "make capi-binaries"}},
		{name: "manager not executable", version: capi.V184, chmod: capi.CoreManager,
			wantErr: []string{"v1.8.4 cluster-api-controller not found"}},
		{name: "webhooks missing", version: capi.V181, skip: []string{"webhooks/" + capi.BootstrapManager + ".yaml"},
			wantErr: []string{"kubeadm-bootstrap-controller webhook manifests not found"}},
		{name: "copy incomplete", version: capi.V181, skip: []string{capi.ManifestsDone}, wantErr: []string{"v1.8.1 CRDs not found"}},
		{name: "copied before clusterctl's CRD", version: capi.V184, skip: []string{"clusterctl/clusterctl.cluster.x-k8s.io_providers.yaml"},
			wantErr: []string{"v1.8.4 clusterctl Provider CRD not found"}},
		{name: "no CRDs", version: capi.V181, skip: []string{"crds/cluster.x-k8s.io_machines.yaml", "crds/cluster.x-k8s.io_clusters.yaml"},
			wantErr: []string{"CRDs not found"}},
		{name: "every missing thing named", version: capi.V184, skip: []string{capi.CoreManager, capi.BootstrapManager, capi.ManifestsDone},
			wantErr: []string{capi.CoreManager + " not found", capi.BootstrapManager + " not found", "CRDs not found", "make capi-binaries"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.version != "v1.9.0" {
				release(t, dir, tc.version, tc.skip...)
			}
			if tc.chmod != "" {
				if err := os.Chmod(filepath.Join(capi.Dir(dir, tc.version), tc.chmod), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r, err := capi.Find(dir, tc.version)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Find: no error, want one containing %q", tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Find: %v\nwant it to contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rd := filepath.Join(dir, "capi-"+tc.version)
			if r.Version != tc.version || r.Dir != rd {
				t.Errorf("release %s in %s, want %s in %s", r.Version, r.Dir, tc.version, rd)
			}
			if len(r.Managers) != 3 {
				t.Fatalf("%d managers, want 3", len(r.Managers))
			}
			for i, m := range r.Managers {
				if m.Name != capi.ManagerNames()[i] || m.Binary != filepath.Join(rd, m.Name) ||
					m.Webhooks != filepath.Join(rd, "webhooks", m.Name+".yaml") {
					t.Errorf("manager %d: %+v", i, m)
				}
			}
			want := []string{filepath.Join(rd, "crds", "cluster.x-k8s.io_clusters.yaml"), filepath.Join(rd, "crds", "cluster.x-k8s.io_machines.yaml")}
			if strings.Join(r.CRDs, ",") != strings.Join(want, ",") {
				t.Errorf("CRDs %v, want %v", r.CRDs, want)
			}
		})
	}
}

// TestBuildScriptMatches keeps hack/labbin/build-capi.sh building, for every version Find knows,
// the three managers under the names Find looks for and the manifests, each from its own module.
func TestBuildScriptMatches(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "hack", "labbin", "build-capi.sh"))
	if err != nil {
		t.Fatal(err)
	}
	script := string(data)
	if want := "for v in " + strings.Join(capi.Versions(), " ") + "; do"; !strings.Contains(script, want) {
		t.Errorf("build-capi.sh has no %q", want)
	}
	for _, m := range capi.ManagerNames() {
		if !regexp.MustCompile(`(?m)^\s*build "capi-\$v" "capi-\$v" \S+ ` + m + `$`).MatchString(script) {
			t.Errorf("build-capi.sh does not build %s into capi-$v", m)
		}
	}
	if !strings.Contains(script, `manifests "capi-$v" "capi-$v" "sigs.k8s.io/cluster-api@$v"`) {
		t.Error("build-capi.sh does not copy the manifests of each version")
	}
	for _, v := range capi.Versions() {
		mod, err := os.ReadFile(filepath.Join("..", "..", "..", "hack", "labbin", "capi-"+v, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		if want := "require sigs.k8s.io/cluster-api " + v + "\n"; !strings.Contains(string(mod), want) {
			t.Errorf("hack/labbin/capi-%s/go.mod lacks %q", v, want)
		}
	}
}
