//go:build unix

package token_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/token"
	"github.com/credwatch/credwatch/internal/cmd/token/cmdtest"
	"github.com/credwatch/credwatch/internal/userfile/userfiletest"
)

// TestCancelBlockedRead gives inspect and verify a token source that blocks forever and cancels
// the context as the first SIGINT/SIGTERM does: the command must return with exit 130. The
// deadline is a safety net against a hang, not a claim about speed.
func TestCancelBlockedRead(t *testing.T) {
	fifo := func(t *testing.T, writer bool) string { return userfiletest.FIFO(t, "token", writer) }
	pipe := func(t *testing.T) *os.File { return userfiletest.Pipe(t) }
	verify := []string{"--issuer", iss, "--key", keyDir + "/kubernetes/rsa.pub"}
	tests := []struct {
		name  string
		args  func(t *testing.T) []string
		stdin func(t *testing.T) *os.File
	}{
		{"inspect FIFO, open blocks", func(t *testing.T) []string { return []string{"inspect", fifo(t, false)} }, nil},
		{"inspect FIFO, read blocks", func(t *testing.T) []string { return []string{"inspect", fifo(t, true)} }, nil},
		{"verify FIFO, open blocks", func(t *testing.T) []string { return append([]string{"verify", fifo(t, false)}, verify...) }, nil},
		{"verify FIFO, read blocks", func(t *testing.T) []string { return append([]string{"verify", fifo(t, true)}, verify...) }, nil},
		{"inspect - on a pipe that never closes", func(*testing.T) []string { return []string{"inspect", "-"} }, pipe},
		{"verify - on a pipe that never closes", func(*testing.T) []string { return append([]string{"verify", "-"}, verify...) }, pipe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args(t)
			var in *os.File
			if tt.stdin != nil {
				in = tt.stdin(t)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan cmdtest.Result, 1)
			go func() {
				if in != nil {
					done <- cmdtest.RunContext(ctx, t, token.NewCommand, in, args...)
				} else {
					done <- cmdtest.RunContext(ctx, t, token.NewCommand, nil, args...)
				}
			}()
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
		})
	}
}
