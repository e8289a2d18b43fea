// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/cli"
)

func TestValidateWorkers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		procs, workers int
		want           string // "" when valid
	}{
		{"default", 2, 0, ""},
		{"4 per CPU", 2, 8, ""},
		{"one over 4 per CPU", 2, 9, "--workers 9: at most 8 here"},
		{"a million", 2, 1_000_000, "--workers 1000000: at most 8 here"},
		{"ceiling on a big machine", 128, 256, ""},
		{"over the ceiling", 128, 257, "--workers 257: at most 256 here"},
		{"negative", 2, -1, "--workers -1: must not be negative"},
		{"no CPU count", 0, 4, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := &options{procs: tt.procs, workers: tt.workers, evidence: 6, progress: "auto"}
			err := o.validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("validate: %v, want nil", err)
				}
				return
			}
			if cli.Code(err) != cli.ExitUsage || !strings.Contains(cli.Message(err), tt.want) {
				t.Fatalf("validate: %v (exit %d), want a usage error containing %q", err, cli.Code(err), tt.want)
			}
		})
	}
}

// TestNoInputNamesIt checks that when nothing could be read the error names what was given.
func TestNoInputNamesIt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	nested := filepath.Join(dir, "nested")
	for _, d := range []string{empty, filepath.Join(nested, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"empty folder", []string{empty}, "logs: no input could be read: " + empty + ": no log files"},
		{"folder of empty folders", []string{nested}, nested + ": no log files"},
		{"missing file", []string{filepath.Join(dir, "missing.log")}, "missing.log: cannot read: no such file or directory"},
		{"two empty folders", []string{empty, nested}, empty + ": no log files (and 1 more inputs, none readable)"},
		{"quiet still names it", []string{"-q", empty}, empty + ": no log files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, stderr, code := run(t, "", tt.args...)
			if code != cli.ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", code, cli.ExitUsage, stderr)
			}
			last := stderr[strings.LastIndexByte(strings.TrimSuffix(stderr, "\n"), '\n')+1:]
			if !strings.Contains(last, tt.want) {
				t.Fatalf("error line %q, want it to contain %q", last, tt.want)
			}
		})
	}
}

// TestTableEscapesLogText: a log line carrying terminal escape sequences reaches the table's
// evidence as visible escapes, never raw.
func TestTableEscapesLogText(t *testing.T) {
	t.Parallel()
	const line = `E1213 15:29:38.634005       1 authentication.go:63] "Unable to authenticate the request" err="[invalid bearer token, service account token has been invalidated]"`
	tests := []struct {
		name, inject, want string
	}{
		{"window title (OSC)", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"carriage return", "\rall good", `\x0dall good`},
		{"C1 CSI", "\u009b2J", `\u009b2J`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := run(t, line+" user=\""+tt.inject+"\"\n", "--year", "2022", "--fail-on", "none", "-")
			if code != 0 {
				t.Fatalf("exit %d; stderr %q", code, stderr)
			}
			if !strings.Contains(stdout, tt.want) {
				t.Errorf("stdout lacks %q:\n%s", tt.want, stdout)
			}
			if strings.ContainsFunc(stdout, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f }) {
				t.Errorf("stdout carries a raw control character: %q", stdout)
			}
		})
	}
}
