// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/cli"
)

const (
	keyDir   = "../../pkg/keys/testdata"
	tokenDir = "../cmd/token/testdata"
	issuer   = "https://kubernetes.default.svc.cluster.local"
)

// TestExitCodes runs credwatch through Main for every exit code docs/exit-codes.md lists (124,
// 130 and the panic path are in the tests below it).
func TestExitCodes(t *testing.T) {
	closed := kubeconfig(t, closedPort(t))
	hanging := kubeconfig(t, hangingServer(t))
	// watch for two of the shortest intervals; each call is bounded by the interval (its default --timeout).
	watchArgs := func(kubeconfig string, more ...string) []string {
		return append([]string{"watch", "--kubeconfig", kubeconfig, "--interval", "1s", "--duration", "2s", "--live", "never"}, more...)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // a part of the one stderr line; "" means stderr is empty
	}{
		{"ok/version", []string{"version"}, cli.ExitOK, ""},
		{"ok/keys equal", []string{"keys", "diff", keyDir + "/kubernetes/rsa.key", keyDir + "/kubernetes/rsa.pub"}, cli.ExitOK, ""},
		{"findings/keys differ", []string{"keys", "diff", keyDir + "/kubernetes/rsa.pub", keyDir + "/gen/rsa-drift.pub"}, cli.ExitFindings, ""},
		{"findings/token rejected", []string{"token", "verify", tokenDir + "/drift.jwt", "--issuer", issuer, "--at", "2026-11-29T12:10:00Z",
			"--key", keyDir + "/kubernetes/rsa.pub"}, cli.ExitFindings, ""},
		{"usage/unknown flag", []string{"--bogus"}, cli.ExitUsage, "unknown flag: --bogus (see 'credwatch --help')"},
		{"usage/unknown subcommand flag", []string{"version", "--bogus"}, cli.ExitUsage, "(see 'credwatch version --help')"},
		{"usage/bad flag value", []string{"check", "--timeout", "soon"}, cli.ExitUsage, `invalid argument "soon" for "--timeout"`},
		{"usage/flag needs an argument", []string{"check", "--timeout"}, cli.ExitUsage, "flag needs an argument"},
		{"usage/unknown command", []string{"bogus"}, cli.ExitUsage, `unknown command "bogus" for "credwatch"`},
		{"usage/unknown command in group", []string{"lab", "bogus"}, cli.ExitUsage, `unknown command "bogus" for "credwatch lab"`},
		{"usage/suggestion", []string{"lab", "stauts"}, cli.ExitUsage, "did you mean status?"},
		{"usage/extra argument", []string{"version", "extra"}, cli.ExitUsage, `unknown command "extra" for "credwatch version"`},
		{"usage/too few arguments", []string{"keys", "diff", keyDir + "/kubernetes/rsa.pub"}, cli.ExitUsage, "accepts 2 arg(s), received 1"},
		{"usage/validation", []string{"check", "--fail-on", "loud"}, cli.ExitUsage, `--fail-on: severity "loud": want one of info, warning, error, critical, none`},
		{"usage/required flag", []string{"lab", "partition", "apiserver-1"}, cli.ExitUsage, "--from is required"},
		{"usage/unreadable input", []string{"token", "inspect", filepath.Join(t.TempDir(), "missing.jwt")}, cli.ExitUsage, "no such file"},
		{"unreachable/closed port", []string{"check", "--kubeconfig", closed, "--no-cloud", "--timeout", "5s"}, cli.ExitUnreachable, "cluster not reachable: GET https://"},
		{"unreachable/cloud closed port", []string{"cloud", "--kubeconfig", closed, "--timeout", "5s"}, cli.ExitUnreachable, "cluster not reachable"},
		{"unreachable/preflight closed port", []string{"preflight", "--kubeconfig", closed, "--capi-cluster", "w1", "-n", "ns", "--timeout", "5s"}, cli.ExitUnreachable, "read cluster ns/w1: "},
		{"unreachable/watch closed port", watchArgs(closed), cli.ExitUnreachable, "no API server member answered in"},
		{"unreachable/watch closed port, fail-on info", watchArgs(closed, "--fail-on", "info"), cli.ExitUnreachable, "connection refused"},
		{"unreachable/watch hanging server", watchArgs(hanging), cli.ExitUnreachable, "no API server member answered"},
		{"usage/watch report in a missing folder", watchArgs(closed, "--report", filepath.Join(t.TempDir(), "no", "roll.html")), cli.ExitUsage, "roll.html: no such file or directory"},
		{"usage/watch report a folder", watchArgs(closed, "--report", t.TempDir()), cli.ExitUsage, "not a regular file"},
		{"usage/watch log file missing", watchArgs(closed, "--log-file", "apiserver-1="+filepath.Join(t.TempDir(), "kube-apiserver.lgo")), cli.ExitUsage, "the file must exist when watch starts"},
		{"ok/group help", []string{"lab"}, cli.ExitOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(append([]string{"credwatch"}, tt.args...), strings.NewReader(""), &out, &errOut)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, tt.code, errOut.String())
			}
			switch {
			case tt.stderr == "" && errOut.Len() > 0:
				t.Errorf("stderr %q, want none", errOut.String())
			case tt.stderr != "" && (!strings.Contains(errOut.String(), tt.stderr) || strings.Count(errOut.String(), "credwatch: error:") != 1):
				t.Errorf("stderr %q, want one error line containing %q", errOut.String(), tt.stderr)
			}
		})
	}
}

// TestWatchReport: --report is opened before the first interval and written over at the end; a
// watch that never ran leaves no file it created.
func TestWatchReport(t *testing.T) {
	closed := kubeconfig(t, closedPort(t))
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tt := range []struct {
		name     string
		existing string // the file's content before; "" : it does not exist
		more     []string
		code     int
		want     string // in the file after; "" : no file
	}{
		{"written at the end", "", nil, cli.ExitUnreachable, "<svg"},
		{"an old report replaced", "old report", nil, cli.ExitUnreachable, "<svg"},
		{"no watch, no file", "", []string{"--listen", busy.Addr().String()}, cli.ExitUsage, ""},
		{"no watch, an old file kept", "old report", []string{"--listen", busy.Addr().String()}, cli.ExitUsage, "old report"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "roll.html")
			if tt.existing != "" {
				if err := os.WriteFile(path, []byte(tt.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"credwatch", "watch", "--kubeconfig", closed, "--interval", "1s", "--duration", "1s",
				"--live", "never", "--report", path}, tt.more...)
			var out, errOut bytes.Buffer
			if code := Main(args, strings.NewReader(""), &out, &errOut); code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, errOut.String())
			}
			b, err := os.ReadFile(path)
			switch {
			case tt.want == "" && !errors.Is(err, os.ErrNotExist):
				t.Errorf("report file left: %v", err)
			case tt.want != "" && (err != nil || !strings.Contains(string(b), tt.want) || tt.want != tt.existing && strings.Contains(string(b), "old report")):
				t.Errorf("report %.80q, %v; want it to contain %q", b, err, tt.want)
			}
		})
	}
}

// failWriter is a stdout that cannot be written: a closed pipe, a full disk.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) {
	return 0, errors.New("write /dev/stdout: no space left on device")
}

// TestExitInternal: an error no one classified is exit 4, not 1 (which means findings), even when
// its text looks like a usage error; a panic is exit 4 too, not the runtime's 2.
func TestExitInternal(t *testing.T) {
	t.Run("unwritable stdout", func(t *testing.T) {
		var errOut bytes.Buffer
		if code := Main([]string{"credwatch", "version"}, strings.NewReader(""), failWriter{}, &errOut); code != cli.ExitInternal {
			t.Fatalf("exit %d, want %d; stderr %s", code, cli.ExitInternal, errOut.String())
		}
		if !strings.Contains(errOut.String(), "no space left on device") {
			t.Errorf("stderr %q does not say what failed", errOut.String())
		}
	})
	for name, run := range map[string]runFunc{
		"usage-like text": func(context.Context, cli.Streams, []string) error {
			return fmt.Errorf("parse supervisor reply: invalid argument")
		},
		"panic": func(context.Context, cli.Streams, []string) error { panic("nil map") },
	} {
		t.Run(name, func(t *testing.T) {
			var errOut bytes.Buffer
			code := supervise(nil, cli.Streams{Out: &bytes.Buffer{}, ErrOut: &errOut}, []string{"credwatch"}, run)
			if code != cli.ExitInternal {
				t.Fatalf("exit %d, want %d; stderr %s", code, cli.ExitInternal, errOut.String())
			}
		})
	}
}

// TestExitInterrupted: the first signal cancels the command, which stops and exits 130.
func TestExitInterrupted(t *testing.T) {
	hanging := kubeconfig(t, hangingServer(t))
	dir := t.TempDir()
	logFile, report := filepath.Join(dir, "apiserver-1.log"), filepath.Join(dir, "roll.html")
	if err := os.WriteFile(logFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"check", []string{"check", "--kubeconfig", hanging, "--no-cloud", "--timeout", "60s"}},
		{"watch", []string{"watch", "--kubeconfig", hanging, "--interval", "1m", "--timeout", "10m", "--live", "never",
			"--log-file", "apiserver-1=" + logFile, "--report", report}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sigs := make(chan os.Signal, 2)
			var out, errOut bytes.Buffer
			time.AfterFunc(300*time.Millisecond, func() { sigs <- os.Interrupt })
			done := make(chan int, 1)
			go func() {
				done <- supervise(sigs, cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, append([]string{"credwatch"}, tt.args...), Run)
			}()
			// Stopped at all, not how fast: the commands' own timeouts are a minute or more (watch
			// has no --duration), so a signal that did not cancel them would keep them past the
			// 2 minutes, a hang guard rather than a figure.
			select {
			case code := <-done:
				if code != cli.ExitInterrupted {
					t.Fatalf("exit %d, want %d; stderr %s", code, cli.ExitInterrupted, errOut.String())
				}
			case <-time.After(2 * time.Minute):
				t.Fatalf("one signal did not stop %s against a hanging server", tt.name)
			}
		})
	}
	if b, err := os.ReadFile(report); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("watch interrupted wrote no report: %.80q, %v", b, err)
	}
}

// TestSecondSignal: a command that ignores cancellation is abandoned on the second signal; Main
// returns 130 at once instead of exiting the process itself.
func TestSecondSignal(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	release := make(chan struct{})
	defer close(release)
	stuck := func(context.Context, cli.Streams, []string) error { <-release; return nil }
	sigs <- os.Interrupt
	sigs <- os.Interrupt
	var errOut bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- supervise(sigs, cli.Streams{ErrOut: &errOut}, []string{"credwatch"}, stuck) }()
	select {
	case code := <-done:
		if code != cli.ExitInterrupted || !strings.Contains(errOut.String(), "interrupted again") {
			t.Fatalf("exit %d, stderr %q; want %d and a note", code, errOut.String(), cli.ExitInterrupted)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a second signal did not return")
	}
}

// closedPort is a 127.0.0.1 address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// hangingServer accepts connections and never answers.
func hangingServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}

// kubeconfig writes a kubeconfig for https://addr with a token and no CA check.
func kubeconfig(t *testing.T, addr string) string {
	return credKubeconfig(t, addr, "{token: not-a-real-token}")
}
