// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputNotInput: an output that is an input, however spelt, is a usage error naming both
// flags; another file, stdin and a new file elsewhere are not.
func TestOutputNotInput(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "kube-apiserver.log")
	other := filepath.Join(dir, "other.log")
	for _, p := range []string{log, other} {
		if err := os.WriteFile(p, []byte("line\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link.log")
	if err := os.Symlink(log, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.log")
	if err := os.Link(log, hard); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	tests := []struct {
		name   string
		out    string
		inputs []string
		want   string // a part of the error; "" : none
	}{
		{"same path", log, []string{log}, "--out " + log + " is also --in (" + log + ")"},
		{"relative spelling", "kube-apiserver.log", []string{log}, "refusing to write over an input"},
		{"dot-dot spelling", filepath.Join(dir, "x", "..", "kube-apiserver.log"), []string{other, log}, "--in (" + log + ")"},
		{"symbolic link", link, []string{log}, "refusing"},
		{"hard link", hard, []string{log}, "refusing"},
		{"new file, same cleaned path as a missing input", "./new.log", []string{filepath.Join(dir, "new.log")}, "refusing"},
		{"another file", other, []string{log}, ""},
		{"new file", filepath.Join(dir, "report.html"), []string{log}, ""},
		{"stdin input", log, []string{"-"}, ""},
		{"stdout output", "-", []string{log}, ""},
		{"no output", "", []string{log}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in []Path
			for _, p := range tt.inputs {
				in = append(in, Path{"--in", p})
			}
			err := OutputNotInput(Path{"--out", tt.out}, in...)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("err %v, want none", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || Code(err) != ExitUsage):
				t.Fatalf("err %v (exit %d), want exit 2 containing %q", err, Code(err), tt.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("err %q is more than one line", err)
			}
		})
	}
}
