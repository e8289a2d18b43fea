// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build unix

package watch

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/cli"

	"github.com/credwatch/credwatch/internal/userfile/userfiletest"
)

// A --log-file or --report that is a FIFO is a usage error at once: opening one used to wait for
// its other end, before any interval ran and beyond --duration and SIGTERM.
func TestFIFOsRefused(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "fifo")
	userfiletest.MkFIFO(t, fifo)
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"log file", []string{"--log-file", "apiserver-1=" + fifo}},
		{"report", []string{"--report", fifo}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			cmd := NewCommand(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			cmd.SetArgs(append([]string{"--kubeconfig", kubeconfigFor(t), "--duration", "1s"}, tt.args...))
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			done := make(chan error, 1)
			go func() { done <- cmd.ExecuteContext(context.Background()) }()
			select {
			case err := <-done:
				if cli.Code(err) != cli.ExitUsage || !strings.Contains(err.Error(), fifo+": not a regular file") {
					t.Fatalf("exit %d: %v; want 2 naming %s", cli.Code(err), err, fifo)
				}
			case <-time.After(time.Minute): // a hang guard, not a timing bound
				t.Fatal("watch blocked opening a FIFO")
			}
		})
	}
}

// `watch | head`: once stdout is a pipe nobody reads, watch stops with 141 (128+SIGPIPE, what a
// shell reports for kubectl or stern killed by SIGPIPE) instead of polling on until --duration.
func TestStdoutReaderGone(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	var errOut bytes.Buffer
	cmd := NewCommand(cli.Streams{In: strings.NewReader(""), Out: w, ErrOut: &errOut})
	cmd.SetArgs([]string{"--kubeconfig", kubeconfigFor(t), "--interval", "1s", "--duration", "60s"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(context.Background()) }()
	time.Sleep(100 * time.Millisecond)
	r.Close()
	select {
	case err := <-done:
		if code := cli.Code(err); code != cli.ExitBrokenPipe {
			t.Errorf("exit %d (%v), want %d; stderr %s", code, err, cli.ExitBrokenPipe, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch kept running after its stdout lost its reader")
	}
}

// While watch runs, the Go runtime's soft memory limit is heapLimit (GOMEMLIMIT unset): against
// endless bodies the default pacing let RSS reach 401 MiB.
func TestHeapLimitWhileRunning(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT is set: watch keeps it")
	}
	var out, errOut bytes.Buffer
	cmd := NewCommand(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"--kubeconfig", kubeconfigFor(t), "--interval", "1s", "--duration", "2s"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(context.Background()) }()
	seen := false
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-time.After(10 * time.Millisecond):
			seen = seen || debug.SetMemoryLimit(-1) == heapLimit // -1 reads the limit
		}
	}
	if !seen {
		t.Errorf("the memory limit was never %d while watch ran", heapLimit)
	}
}
