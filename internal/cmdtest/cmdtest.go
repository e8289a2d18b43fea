// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package cmdtest runs a credwatch command in-process the way internal/app does (same error line,
// same exit code) and compares output with golden files. Test helper for the commands of
// internal/cmd.
package cmdtest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
)

// Result is what a run produced.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run executes the command built by newCmd with args and stdin, and returns its output and the
// exit code credwatch would return. A panic fails the test.
func Run(t testing.TB, newCmd func(cli.Streams) *cobra.Command, stdin io.Reader, args ...string) Result {
	t.Helper()
	return RunContext(context.Background(), t, newCmd, stdin, args...)
}

// RunContext is Run with the command's context (cancel it as a first signal would).
func RunContext(ctx context.Context, t testing.TB, newCmd func(cli.Streams) *cobra.Command, stdin io.Reader, args ...string) Result {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errOut bytes.Buffer
	s := cli.Streams{In: stdin, Out: &out, ErrOut: &errOut}
	cmd := newCmd(s)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cli.UsageErrors(cmd) // as root does for the whole tree
	cmd.SetArgs(args)
	cmd.SetIn(stdin)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(ctx)
	code := cli.Code(err)
	if msg := cli.Message(err); msg != "" {
		errOut.WriteString("credwatch: error: " + msg + "\n")
	}
	return Result{Stdout: out.String(), Stderr: errOut.String(), Code: code}
}

// Usage runs the command built by newCmd with args and fails the test unless it is a usage error
// (exit 2) whose message holds want, with nothing on stdout.
func Usage(t testing.TB, newCmd func(cli.Streams) *cobra.Command, want string, args ...string) {
	t.Helper()
	r := Run(t, newCmd, nil, args...)
	if !strings.Contains(r.Stderr, "credwatch: error: ") || !strings.Contains(r.Stderr, want) {
		t.Fatalf("stderr = %q, want an error with %q", r.Stderr, want)
	}
	if r.Code != cli.ExitUsage {
		t.Errorf("exit %d, want %d", r.Code, cli.ExitUsage)
	}
	if r.Stdout != "" {
		t.Errorf("stdout not empty: %s", r.Stdout)
	}
}

// Interrupt runs the command built by newCmd with args and stdin, cancels its context as the
// first SIGINT/SIGTERM does once it has had a moment to block, and fails the test unless the
// command returns exit 130. The 30-s deadline is a safety net against a hang, not a claim about
// speed.
func Interrupt(t *testing.T, newCmd func(cli.Streams) *cobra.Command, stdin io.Reader, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() { done <- RunContext(ctx, t, newCmd, stdin, args...) }()
	time.Sleep(20 * time.Millisecond) // let it block; it passes as well if it has not yet
	cancel()
	select {
	case r := <-done:
		if r.Code != cli.ExitInterrupted {
			t.Fatalf("exit %d, want %d; stderr %q", r.Code, cli.ExitInterrupted, r.Stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the command did not return after its context was cancelled")
	}
}

// Golden compares got with the file at path, rewriting it when update is set.
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run go test -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// HTMLServer answers every request with an HTML page, like a login proxy in front of an API.
func HTMLServer(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html>sign in</html>"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// HangingServer never answers until the client gives up or the test ends.
func HangingServer(t testing.TB) *httptest.Server {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv
}
