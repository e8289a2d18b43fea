// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package input

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/limits"
)

// TestArgsForms: v1beta3's map and v1beta4's list of the same flags read the same.
func TestArgsForms(t *testing.T) {
	var m, l Args
	if err := m.UnmarshalJSON([]byte(`{"service-account-issuer":"https://a","api-audiences":"x,y"}`)); err != nil {
		t.Fatal(err)
	}
	if err := l.UnmarshalJSON([]byte(`[{"name":"api-audiences","value":"x,y"},{"name":"service-account-issuer","value":"https://a"}]`)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, l) {
		t.Errorf("map %v, list %v", m, l)
	}
	if err := l.UnmarshalJSON([]byte(`7`)); err == nil {
		t.Error("a number read as extraArgs")
	}
}

// TestUnknownKindsIgnored: a kind preflight does not read is listed, never an error.
func TestUnknownKindsIgnored(t *testing.T) {
	s := &Set{}
	if err := s.Add("x.yaml", []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n---\n# only a comment\n")); err != nil {
		t.Fatal(err)
	}
	if got := s.SortedIgnored(); len(got) != 1 || got[0].String() != "Deployment web in x.yaml" {
		t.Errorf("ignored %v", got)
	}
}

// TestList: a List, or any *List kind (kubectl get -o yaml), is read as its items; a List in a
// List and a malformed item are refused.
func TestList(t *testing.T) {
	const kcp = `{apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane, metadata: {name: cp, labels: {cluster.x-k8s.io/cluster-name: w1}}, spec: {replicas: 1, version: v1.30.4, kubeadmConfigSpec: {}}}`
	const secret = `{apiVersion: v1, kind: Secret, metadata: {name: w1-sa}, data: {}}`
	tests := []struct {
		name    string
		doc     string
		kcps    int
		ignored int
		err     string
	}{
		{"List", "apiVersion: v1\nkind: List\nitems:\n- " + kcp + "\n- " + secret + "\n- {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}}\n", 1, 1, ""},
		{"typed list", "apiVersion: controlplane.cluster.x-k8s.io/v1beta1\nkind: KubeadmControlPlaneList\nitems:\n- " + kcp + "\n", 1, 0, ""},
		{"empty", "apiVersion: v1\nkind: List\nitems: []\n", 0, 0, ""},
		{"nested", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: List, items: []}\n", 0, 0, "a List inside a List"},
		{"item without kind", "apiVersion: v1\nkind: List\nitems:\n- {metadata: {name: x}}\n", 0, 0, "item 1 of the List: no kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Set{}
			err := s.Add("current.yaml", []byte(tt.doc))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(s.KCPs) != tt.kcps || len(s.Ignored) != tt.ignored {
				t.Errorf("%d KCPs, %d ignored (%v), want %d, %d", len(s.KCPs), len(s.Ignored), s.Ignored, tt.kcps, tt.ignored)
			}
		})
	}
}

// TestLoadDirBound: a directory whose files add up to more than limits.Dir is one line naming
// the directory and the bound, before any file is read; each file alone is within limits.File.
func TestLoadDirBound(t *testing.T) {
	t.Parallel()
	dir := func(t *testing.T, files int, size int64) string {
		d := t.TempDir()
		for i := range files {
			f, err := os.Create(filepath.Join(d, fmt.Sprintf("%02d.yaml", i)))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(size); err != nil { // sparse: costs no disk
				t.Fatal(err)
			}
			f.Close()
		}
		return d
	}
	small := t.TempDir()
	if err := os.WriteFile(filepath.Join(small, "a.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	over := dir(t, limits.Dir/limits.File+1, limits.File)
	for _, tt := range []struct {
		name, path, wantErr string
	}{
		{"small", small, ""},
		{"over the sum", over, over + ": its .yaml, .yml and .json files add up to more than 64 MiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(t.Context(), tt.path)
			if got := fmt.Sprint(err); (tt.wantErr == "" && err != nil) || (tt.wantErr != "" && got != tt.wantErr) {
				t.Errorf("Load: %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestKubeadmVersions: kubeadm configuration of v1beta2 to v1beta4 is read; v1beta1 and an
// unknown version are refused, naming the version, never read as if they were known.
func TestKubeadmVersions(t *testing.T) {
	for _, tt := range []struct {
		version string
		ok      bool
	}{
		{"v1beta2", true}, {"v1beta3", true}, {"v1beta4", true}, {"v1beta1", false}, {"v1beta9", false}, {"v1", false},
	} {
		s := &Set{}
		err := s.Add("kubeadm.yaml", []byte("apiVersion: kubeadm.k8s.io/"+tt.version+"\nkind: ClusterConfiguration\n"))
		if (err == nil) != tt.ok || err != nil && !strings.Contains(err.Error(), `"kubeadm.k8s.io/`+tt.version+`"`) {
			t.Errorf("%s: error %v, want accepted %v", tt.version, err, tt.ok)
		}
	}
}

// TestDuplicateKeys: a key given twice, at any depth, is malformed YAML, never one of its values.
func TestDuplicateKeys(t *testing.T) {
	for name, doc := range map[string]string{
		"top":    "apiVersion: v1\nkind: Secret\nkind: Pod\nmetadata: {name: x}\n",
		"nested": "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n    service-account-issuer: https://a\n    service-account-issuer: https://b\n",
	} {
		s := &Set{}
		if err := s.Add("x.yaml", []byte(doc)); err == nil || !strings.Contains(err.Error(), "malformed YAML") {
			t.Errorf("%s: error %v, want malformed YAML", name, err)
		}
	}
}
