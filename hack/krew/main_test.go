// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestManifestValid runs krew's own validation (cmd/validate-krew-manifest of sigs.k8s.io/krew,
// pinned in go.mod) on freshly rendered manifests, of every platform and of one: apiVersion,
// kind, name, semver version, sha256 form, file operations, selectors matching a supported
// platform and none overlapping. -skip-install: TestInstallFromRelease installs real archives.
func TestManifestValid(t *testing.T) {
	for name, only := range map[string][]target{"all": nil, "linux-amd64": {{"linux", "amd64"}}} {
		m := filepath.Join(t.TempDir(), "credwatch.yaml")
		var b bytes.Buffer
		if err := render(&b, "v1.2.3", strings.NewReader(fakeChecksums("v1.2.3", targets())), only); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(m, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(tool(t, "validate-krew-manifest"), "-manifest", m, "-skip-install").CombinedOutput()
		if err != nil {
			t.Errorf("krew rejects the %s manifest: %v\n%s", name, err, out)
		}
	}
}

// TestRenderPlatforms: the manifest offers the archives checksums.txt lists, or exactly those
// asked for.
func TestRenderPlatforms(t *testing.T) {
	linux := []target{{"linux", "amd64"}, {"linux", "arm64"}}
	var b bytes.Buffer
	if err := render(&b, "v1.2.3", strings.NewReader(fakeChecksums("v1.2.3", linux)), nil); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "- selector:"); n != 2 || strings.Contains(b.String(), "darwin") {
		t.Errorf("from two linux archives, the manifest offers %d platforms:\n%s", n, b.String())
	}
	if !strings.Contains(b.String(), "releases/download/v1.2.3/credwatch_v1.2.3_linux_arm64.tar.gz") {
		t.Errorf("no linux/arm64 uri:\n%s", b.String())
	}
	for _, c := range []struct {
		sums []target
		only []target
		err  string
	}{
		{linux, []target{{"darwin", "arm64"}}, "no line for credwatch_v1.2.3_darwin_arm64.tar.gz"},
		{nil, nil, "no archive of v1.2.3"},
	} {
		err := render(&b, "v1.2.3", strings.NewReader(fakeChecksums("v1.2.3", c.sums)), c.only)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("render(%v of %v) = %v, want %q", c.only, c.sums, err, c.err)
		}
	}
	if _, err := parseTargets("linux/386"); err == nil {
		t.Error("-platforms linux/386 accepted")
	}
}

// TestTargetsMatchRelease: the manifest offers exactly hack/release's default platforms (read
// from its source: hack/release is in the main module, which this one cannot import).
func TestTargetsMatchRelease(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../release/main.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var release []string
	ast.Inspect(f, func(n ast.Node) bool {
		if v, ok := n.(*ast.ValueSpec); ok && len(v.Names) == 1 && v.Names[0].Name == "defaultPlatforms" {
			if lit, ok := v.Values[0].(*ast.BasicLit); ok {
				s, _ := strconv.Unquote(lit.Value)
				release = strings.Split(s, ",")
			}
		}
		return true
	})
	if release == nil {
		t.Fatal("../release/main.go has no string constant defaultPlatforms")
	}
	var ours []string
	for _, tg := range targets() {
		ours = append(ours, tg.String())
	}
	slices.Sort(release)
	if !slices.Equal(release, ours) {
		t.Errorf("hack/release builds %v, the manifest offers %v", release, ours)
	}
}

func fakeChecksums(version string, ts []target) string {
	var b strings.Builder
	for i, tg := range ts {
		fmt.Fprintf(&b, "%064x  %s\n", i+1, tg.Archive(version))
	}
	return b.String()
}

// TestManifestShim: every platform unpacks kubectl_complete-credwatch, and the caveats copy it
// from krew's store of this very version to krew's bin (TestInstallFromRelease runs the line).
func TestManifestShim(t *testing.T) {
	var b bytes.Buffer
	if err := render(&b, "v1.2.3", strings.NewReader(fakeChecksums("v1.2.3", targets())), nil); err != nil {
		t.Fatal(err)
	}
	m := b.String()
	if n := strings.Count(m, "- from: "+shim+"\n"); n != len(targets()) {
		t.Errorf("%d platforms of %d unpack %s:\n%s", n, len(targets()), shim, m)
	}
	want := `cp "${KREW_ROOT:-$HOME/.krew}/store/credwatch/v1.2.3/` + shim + `" "${KREW_ROOT:-$HOME/.krew}/bin/"`
	if !strings.Contains(m, want) {
		t.Errorf("the caveats have no %q:\n%s", want, m)
	}
}

// tool is the path of hack/tools.sh's build of the pinned tool name, built first if missing
// (github.com/credwatch/credwatch/internal/toolcache.Path, in a module this one does not require).
func tool(t *testing.T, name string) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command("../tools.sh", "-p", name)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/tools.sh -p %s: %v\n%s", name, err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out))
}
