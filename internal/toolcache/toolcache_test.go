// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package toolcache

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fakeGo is a go command that builds nothing: `go build ... -o OUT PKG` logs its arguments and
// writes a script to OUT, or fails when $FAKE_GO_FAIL is set.
const fakeGo = `#!/bin/sh
case "$1" in
env) shift; for v; do
    case $v in GOOS) echo linux ;; GOARCH) echo amd64 ;; GOVERSION) echo "${FAKE_GOVERSION:-go1.26.8}" ;;
    GOFLAGS) echo "${GOFLAGS:-}" ;; *) echo ;; esac
  done ;;
build)
  [ -n "$FAKE_GO_FAIL" ] && { echo "fake go: build failed" >&2; exit 1; }
  echo "$(basename "$PWD"): $*" >>"$FAKE_GO_LOG"
  while [ $# -gt 1 ]; do [ "$1" = -o ] && out=$2; shift; done
  printf '#!/bin/sh\necho tool\n' >"$out" && chmod +x "$out" ;;
*) echo "fake go: $*" >&2; exit 2 ;;
esac
`

// tree is a copy of hack/tools.sh beside fake deploy modules, with the fake go command.
type tree struct {
	root, cache, log string
}

func newTree(t *testing.T) tree {
	t.Helper()
	dir := t.TempDir()
	tr := tree{root: filepath.Join(dir, "repo"), cache: filepath.Join(dir, "cache"), log: filepath.Join(dir, "builds")}
	script, err := os.ReadFile("../../hack/tools.sh")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"hack/tools.sh":        string(script),
		"hack/krew/go.mod":     "module example.com/krew\n",
		"hack/krew/go.sum":     "sigs.k8s.io/krew v0.4.3 h1:one\n",
		"hack/promtool/go.mod": "module example.com/promtool\n",
		"hack/promtool/go.sum": "github.com/prometheus/prometheus v0.300.0 h1:one\n",
	}
	for f, data := range files {
		p := filepath.Join(tr.root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	goCmd := filepath.Join(dir, "go")
	if err := os.WriteFile(goCmd, []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GO", goCmd)
	t.Setenv("FAKE_GO_LOG", tr.log)
	t.Setenv("CREDWATCH_LAB_SHARED_CACHE", tr.cache)
	t.Setenv("FAKE_GO_FAIL", "")
	t.Setenv("FAKE_GOVERSION", "")
	t.Setenv("GOFLAGS", "")
	return tr
}

// run runs hack/tools.sh with args and returns its stdout and stderr.
func (tr tree) run(t *testing.T, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(tr.root, "hack", "tools.sh"), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tools.sh %v: %v\n%s", args, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), stderr.String()
}

func (tr tree) builds(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(tr.log)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// TestBuildOnce: make tools builds each tool once, stripped and without build paths; a second
// run, and every test's Path, use the cached binary, until the module's go.sum changes.
func TestBuildOnce(t *testing.T) {
	tr := newTree(t)
	_, stderr := tr.run(t)
	for _, name := range []string{"promtool", "validate-krew-manifest", "krew"} {
		if !regexp.MustCompile(`(?m)^tools: built ` + name + ` in \d+ s`).MatchString(stderr) {
			t.Errorf("make tools printed no %q build:\n%s", name, stderr)
		}
	}
	builds := tr.builds(t)
	want := []string{
		"promtool: build -trimpath -ldflags -s -w -tags=remove_all_sd -o ",
		"krew: build -trimpath -ldflags -s -w -o ",
		"krew: build -trimpath -ldflags -s -w -o ",
	}
	if len(builds) != len(want) {
		t.Fatalf("make tools ran %d builds, want %d:\n%s", len(builds), len(want), strings.Join(builds, "\n"))
	}
	for i, b := range builds {
		if !strings.HasPrefix(b, want[i]) {
			t.Errorf("build %d: %q, want %q…", i, b, want[i])
		}
	}

	_, stderr = tr.run(t)
	if n := len(tr.builds(t)); n != 3 || strings.Count(stderr, " cached\n") != 3 {
		t.Errorf("a second make tools built again (%d builds):\n%s", n, stderr)
	}
	krew, err := Path(tr.root, "krew")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`/tools/krew-[0-9a-f]{16}$`).MatchString(krew) || !strings.HasPrefix(krew, tr.cache+"/") {
		t.Errorf("krew is %s, want %s/tools/krew-KEY", krew, tr.cache)
	}
	if out, err := exec.Command(krew).Output(); err != nil || string(out) != "tool\n" {
		t.Errorf("%s: %q, %v", krew, out, err)
	}
	if n := len(tr.builds(t)); n != 3 {
		t.Errorf("Path of a cached tool built it again (%d builds)", n)
	}

	// A version bump: a new key and a new build; the other tools stay cached.
	if err := os.WriteFile(filepath.Join(tr.root, "hack/krew/go.sum"), []byte("sigs.k8s.io/krew v0.4.4 h1:two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bumped, err := Path(tr.root, "krew")
	if err != nil {
		t.Fatal(err)
	}
	if bumped == krew || len(tr.builds(t)) != 4 {
		t.Errorf("after krew's go.sum changed, Path gave %s (was %s) after %d builds, want a new build", bumped, krew, len(tr.builds(t)))
	}
	if _, stderr := tr.run(t, "promtool"); stderr != "tools: promtool cached\n" {
		t.Errorf("promtool, whose module did not change: %q", stderr)
	}
}

// TestKey: the key is stable, and differs between tools of one module, between go.mod files,
// Go toolchains and GOFLAGS.
func TestKey(t *testing.T) {
	tr := newTree(t)
	key := func(name string) string {
		k, _ := tr.run(t, "-k", name)
		if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(k) {
			t.Fatalf("tools.sh -k %s: %q", name, k)
		}
		return k
	}
	promtool := key("promtool")
	if again := key("promtool"); again != promtool {
		t.Errorf("promtool's key changed from %s to %s with nothing changed", promtool, again)
	}
	if key("prometheus") == promtool {
		t.Error("promtool and prometheus, one module's two tools, have one key")
	}
	t.Setenv("FAKE_GOVERSION", "go1.27.0")
	if key("promtool") == promtool {
		t.Error("promtool's key did not change with the Go toolchain")
	}
	t.Setenv("FAKE_GOVERSION", "")
	t.Setenv("GOFLAGS", "-race")
	if key("promtool") == promtool {
		t.Error("promtool's key did not change with GOFLAGS")
	}
	t.Setenv("GOFLAGS", "")
	if again := key("promtool"); again != promtool {
		t.Errorf("promtool's key is %s with the environment as it was, want %s", again, promtool)
	}
	if err := os.WriteFile(filepath.Join(tr.root, "hack/promtool/go.mod"), []byte("module example.com/promtool\n\ngo 1.27\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if key("promtool") == promtool {
		t.Error("promtool's key did not change with its go.mod")
	}
	if len(tr.builds(t)) != 0 {
		t.Error("tools.sh -k built something")
	}
}

// TestFailedBuild: a failed build says why, and leaves nothing in the cache.
func TestFailedBuild(t *testing.T) {
	tr := newTree(t)
	t.Setenv("FAKE_GO_FAIL", "1")
	_, err := Path(tr.root, "krew")
	if err == nil || !strings.Contains(err.Error(), "fake go: build failed") || !strings.Contains(err.Error(), "tools: building krew failed") {
		t.Errorf("Path of a failing build: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(tr.cache, "tools", "krew-*"))
	if len(left) != 0 {
		t.Errorf("a failed build left %v", left)
	}
	if _, err := Path(tr.root, "kubectl"); err == nil || !strings.Contains(err.Error(), "no tool kubectl") {
		t.Errorf("Path of an unknown tool: %v", err)
	}
}
