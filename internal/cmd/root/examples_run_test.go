// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package root

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmdtest"
)

// TestExamplesRun runs every example classes() runs offline through the real command tree, in a
// directory holding the files it names (offlineFiles), cloud logins going to vcsim. There is no
// cluster: KUBECONFIG names a file that does not exist, so an example that needs one exits 2
// and fails here.
func TestExamplesRun(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	written := examplesByCmd(t) // before leaving the package directory
	dir := t.TempDir()
	sim := startVCSim(t)
	makeFiles(t, dir, offlineFiles(root, sim))
	t.Chdir(dir)
	t.Setenv("KUBECONFIG", filepath.Join(dir, "no-cluster.kubeconfig"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	env := exampleEnv{dir: dir}
	for _, c := range classes() {
		if c.class == runOffline {
			env.run(t, c, written[c.cmd])
		}
	}
}

// examplesByCmd are the examples by command: one command may be written in several places.
func examplesByCmd(t *testing.T) map[string][]example {
	t.Helper()
	out := map[string][]example{}
	for _, ex := range examples(t) {
		out[ex.cmd] = append(out[ex.cmd], ex)
	}
	return out
}

// exampleEnv is where examples run: dir is the working directory, holds the files they name and
// roots the absolute paths they name; rewrite, if set, fits their arguments to it (the lab's).
type exampleEnv struct {
	dir     string
	rewrite func(args []string) []string
}

// run runs c, written at exs, through the real command tree and checks what every example must
// do: no panic, an exit code its command's docs give (never 2, bad input: the example is wrong),
// and output. It reports whether c passed.
func (e exampleEnv) run(t *testing.T, c classified, exs []example) bool {
	t.Helper()
	if len(exs) == 0 {
		t.Errorf("%q: no example (TestExamplesClassified says which)", c.cmd)
		return false
	}
	var where []string
	for _, ex := range exs {
		where = append(where, ex.where)
	}
	return t.Run(strings.ReplaceAll(c.cmd, " ", "_"), func(t *testing.T) {
		args := e.args(exs[0].words)
		var stdin io.Reader
		if c.stdin != "" {
			f, err := os.Open(filepath.Join(e.dir, c.stdin))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			stdin = f
		}
		start := time.Now()
		r, panicked := runTree(t, stdin, args)
		t.Logf("credwatch %s: exit %d in %s", strings.Join(args, " "), r.Code, time.Since(start).Round(time.Millisecond))
		at := fmt.Sprintf("%s: credwatch %s", strings.Join(where, ", "), c.cmd)
		if panicked != "" {
			t.Fatalf("%s: panic: %s", at, panicked)
		}
		codes := documentedCodes(commandPath(args))
		if !slices.Contains(codes, r.Code) {
			t.Errorf("%s: exit %d; its docs give %v\nstdout:\n%s\nstderr:\n%s", at, r.Code, codes, head(r.Stdout), head(r.Stderr))
		}
		if (r.Code <= cli.ExitFindings && strings.TrimSpace(r.Stdout) == "") || r.Stdout+r.Stderr == "" {
			t.Errorf("%s: exit %d and no output\nstderr:\n%s", at, r.Code, head(r.Stderr))
		}
		for _, ex := range exs {
			if r.Code == cli.ExitOK && !jqFinds(r.Stdout, ex.into) {
				t.Errorf("%s: credwatch %s | %s prints nothing: the output lacks that field\nstdout:\n%s", ex.where, c.cmd, ex.into, head(r.Stdout))
			}
		}
	})
}

// args are the example's words as the shell would pass them from e.dir: a pattern replaced by
// the files it matches there (kept as it is when it matches none, as the shell does), an
// absolute path taken below e.dir; then fitted by e.rewrite.
func (e exampleEnv) args(words []word) []string {
	var args []string
	for _, w := range words {
		switch {
		case w.pattern:
			m, _ := filepath.Glob(w.text)
			if len(m) == 0 {
				m = []string{w.text}
			}
			args = append(args, m...)
		case filepath.IsAbs(w.text):
			args = append(args, filepath.Join(e.dir, w.text))
		default:
			args = append(args, w.text)
		}
	}
	if e.rewrite != nil {
		args = e.rewrite(args)
	}
	return args
}

// runTree runs credwatch with args as cmdtest.Run does; a panic is returned with its stack.
func runTree(t *testing.T, stdin io.Reader, args []string) (r cmdtest.Result, panicked string) {
	defer func() {
		if p := recover(); p != nil {
			panicked = fmt.Sprintf("%v\n%s", p, debug.Stack())
		}
	}()
	return cmdtest.Run(t, func(s cli.Streams) *cobra.Command { return NewCommand("credwatch", s) }, stdin, args...), ""
}

// commandPath is the path of the command args run, without "credwatch ": "keys diff".
func commandPath(args []string) string {
	root := NewCommand("credwatch", cli.Streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	c, _, err := root.Find(args)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(c.CommandPath(), "credwatch ")
}

// documentedCodes are the exit codes a command's docs give it (docs/exit-codes.md, its manual
// and its help) for a run that did what it was asked: 2 (bad input) and 4 (internal error) are
// never among them.
func documentedCodes(path string) []int {
	switch path {
	case "check", "cloud", "logs", "preflight", "watch":
		return []int{cli.ExitOK, cli.ExitFindings, cli.ExitUnreachable}
	case "keys diff", "token verify":
		return []int{cli.ExitOK, cli.ExitFindings}
	}
	return []int{cli.ExitOK}
}

// jqFinds reports whether `jq -r .a.b`, when into is that, prints a value from out; any other
// consumer (or none) finds whatever there is.
func jqFinds(out, into string) bool {
	expr, ok := strings.CutPrefix(into, "jq -r .")
	if !ok {
		return true
	}
	expr = strings.TrimRight(strings.Fields(expr)[0], ")")
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		return false
	}
	for _, k := range strings.Split(expr, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		v = m[k]
	}
	s, ok := v.(string)
	return ok && s != ""
}

// head is the start of s, enough to see why.
func head(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "\n[…]"
	}
	return s
}

func TestJQFinds(t *testing.T) {
	const out = `{"kind":"LabStatus","lab":{"adminKubeconfig":"/l/admin.kubeconfig","members":[]}}`
	tests := []struct {
		into string
		want bool
	}{
		{"", true},
		{"kubectl apply -f -", true},
		{"jq -r .lab.adminKubeconfig)", true},
		{"jq -r .lab.adminKubeConfig)", false},
		{"jq -r .workloadKubeconfig)", false},
		{"jq -r .lab.members", false},
	}
	for _, tt := range tests {
		if got := jqFinds(out, tt.into); got != tt.want {
			t.Errorf("jqFinds(%q) = %v, want %v", tt.into, got, tt.want)
		}
	}
}
