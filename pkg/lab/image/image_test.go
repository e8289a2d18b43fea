// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package image

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// tree writes files (path -> content) under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, data := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestSourceHash(t *testing.T) {
	base := map[string]string{"go.mod": "module " + ModulePath + "\n", "go.sum": "", "cmd/credwatch/main.go": "package main", "pkg/catalogue/catalogue.yaml": "a: 1"}
	with := func(p, data string) map[string]string {
		m := map[string]string{p: data}
		for k, v := range base {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
		return m
	}
	h := func(files map[string]string) string {
		s, err := SourceHash(tree(t, files), "")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ref := h(base)
	tests := []struct {
		name    string
		files   map[string]string
		changed bool
	}{
		{"same tree", with("go.mod", base["go.mod"]), false},
		{"a test", with("pkg/x/x_test.go", "package x"), false},
		{"testdata", with("pkg/x/testdata/big.json", "{}"), false},
		{"build output", with("bin/credwatch", "ELF"), false},
		{"lab cache", with(".lab-cache/bin/etcd", "ELF"), false},
		{"nested module", with("hack/labbin/etcd/go.mod", "module x"), false},
		{"source change", with("cmd/credwatch/main.go", "package main // changed"), true},
		{"new source", with("pkg/x/x.go", "package x"), true},
		{"embedded file", with("pkg/catalogue/catalogue.yaml", "a: 2"), true},
		{"dependency", with("go.sum", "x v1 h1:abc"), true},
	}
	for _, tt := range tests {
		if got := h(tt.files) != ref; got != tt.changed {
			t.Errorf("%s: hash changed = %v, want %v", tt.name, got, tt.changed)
		}
	}
}

func TestFindSource(t *testing.T) {
	root := tree(t, map[string]string{"go.mod": "// c\nmodule " + ModulePath + " // x\n", "pkg/lab/image/x.go": "", "hack/labbin/etcd/go.mod": "module other\n"})
	for _, from := range []string{root, filepath.Join(root, "pkg/lab/image"), filepath.Join(root, "hack/labbin/etcd")} {
		got, err := FindSource(from)
		if err != nil || got != root {
			t.Errorf("FindSource(%s) = %q, %v; want %s", from, got, err, root)
		}
	}
	if _, err := FindSource(t.TempDir()); err == nil {
		t.Error("FindSource outside the module succeeded")
	}
}

func TestPrune(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, n := range []string{"a", "b", "c", "d", "e"} {
		p := filepath.Join(dir, "lab-images-amd64-"+n+".tar")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		mt := time.Unix(int64(1000+i), 0)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	other := filepath.Join(dir, "lab-images-arm64-a.tar")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	prune(dir, "amd64", paths[0]) // the current one is the oldest
	for i, p := range paths {
		want := i == 0 || i >= 3 // current + the 2 newest others
		if got := exists(p); got != want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(p), got, want)
		}
	}
	if !exists(other) {
		t.Error("another architecture's tarball was removed")
	}
}

// TestIntegrationBuildLabImages builds the real images from this repository (a static build of
// credwatch: minutes on a cold build cache) and checks the second call reuses the tarball.
func TestIntegrationBuildLabImages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds credwatch; skipped under -short")
	}
	out := t.TempDir()
	start := time.Now()
	tb, err := BuildLabImages(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(tb)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s (%.1f MB) in %s", filepath.Base(tb), float64(st.Size())/1e6, time.Since(start).Round(time.Second))
	for _, ref := range []string{PauseRef, TenantRef, CredwatchRef, PlatformRef, ProviderRef} {
		tag, err := name.NewTag(ref)
		if err != nil {
			t.Fatal(err)
		}
		img, err := tarball.ImageFromPath(tb, &tag)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) != 1 {
			t.Errorf("%s: user %q entrypoint %v", ref, cf.Config.User, cf.Config.Entrypoint)
		}
	}
	start = time.Now()
	again, err := BuildLabImages(context.Background(), out)
	if err != nil || again != tb {
		t.Fatalf("second call = %q, %v; want the cached %s", again, err, tb)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the cached call took %s", d)
	}
	t.Logf("cached call: %s", time.Since(start).Round(time.Millisecond))
}
