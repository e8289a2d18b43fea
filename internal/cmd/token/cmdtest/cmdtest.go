// Package cmdtest runs a credwatch command in-process the way internal/app does (same error line,
// same exit code) and compares output with golden files. Test helper for the token and keys
// commands.
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
