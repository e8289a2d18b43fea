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
