// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package app runs the credwatch command line: it sets up signals, builds the command tree, runs
// it and turns the result into an exit code. It never exits; main does, with Main's code.
package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/root"
	"github.com/credwatch/credwatch/pkg/redact"
)

// Main runs credwatch with args (args[0] is the program name) and returns the exit code. The first
// SIGINT or SIGTERM cancels the command's context and lets it finish (exit 130 unless it
// succeeded anyway); a second one makes Main return 130 at once, leaving the command behind for
// main's exit to end.
//
// Every byte of stdout and stderr goes through redaction (redact.Writer): token signatures,
// private keys, credential values, and the kubeconfig's own credentials (which cli.KubeFlags
// adds to the shared redact.Known as it loads them).
func Main(args []string, in io.Reader, out, errOut io.Writer) int {
	quietKlog()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	known := &redact.Known{}
	// stderr is text for people: its writer also quotes control and format characters. stdout
	// carries data too (-o json|yaml|sarif|junit), so its text paths (tables, watch's lines and
	// live view) quote themselves with redact.Printable.
	rout, rerr := redact.NewWriter(out, known), redact.NewTextWriter(errOut, known)
	code := supervise(sigs, cli.Streams{In: in, Out: rout, ErrOut: rerr, Known: known, SecretOut: out}, args, Run)
	// What is held back is the end of a last line without a newline; a stdout that cannot take
	// it failed the command already, or fails it now.
	if err := rout.Flush(); err != nil && code == cli.ExitOK {
		fmt.Fprintf(rerr, "%s: error: %s\n", cli.DisplayName(args[0]), redact.Text(err.Error()))
		code = cli.ExitInternal
	}
	_ = rerr.Flush()
	return code
}

// quietKlog stops client-go's klog lines ("Unexpected error when reading response body", ...)
// reaching stderr: every failure they describe comes back as an error that credwatch reports
// once, in its own words. klog is process-wide, so this is start-up's to do, not a command's.
func quietKlog() {
	klog.SetLogger(logr.Discard())
}

// runFunc is Run's shape; tests substitute commands that ignore cancellation.
type runFunc func(ctx context.Context, s cli.Streams, args []string) error

// supervise runs run in its own goroutine so that a second signal on sigs can return without it.
func supervise(sigs <-chan os.Signal, s cli.Streams, args []string, run runFunc) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	name := cli.DisplayName(args[0])
	done := make(chan error, 1)
	go func() { done <- runRecovered(ctx, s, args, run) }()
	interrupted := false
	for {
		select {
		case err := <-done:
			if msg := redact.Text(cli.Message(err)); msg != "" {
				fmt.Fprintf(s.ErrOut, "%s: error: %s\n", name, msg)
			}
			code := cli.Code(err)
			if interrupted && code != cli.ExitOK {
				code = cli.ExitInterrupted
			}
			return code
		case <-sigs:
			if interrupted {
				fmt.Fprintf(s.ErrOut, "%s: interrupted again: leaving without waiting for the command to stop\n", name)
				return cli.ExitInterrupted
			}
			interrupted = true
			cancel(context.Canceled)
		}
	}
}

// runRecovered turns a panic into an internal error (exit 4) with the stack on stderr, instead of
// the runtime's exit 2, which would read as a usage error.
func runRecovered(ctx context.Context, s cli.Streams, args []string, run runFunc) (err error) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(s.ErrOut, "%s", debug.Stack())
			err = &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("internal error: %v (please report it with the stack above)", p)}
		}
	}()
	return run(ctx, s, args)
}

// Run builds the command tree and executes it; tests call it directly. Flag, argument and
// unknown-command errors come back as usage errors (cli.UsageErrors, wired in root).
func Run(ctx context.Context, s cli.Streams, args []string) error {
	cmd := root.NewCommand(cli.DisplayName(args[0]), s)
	cmd.SetArgs(args[1:])
	cmd.SetIn(s.In)
	cmd.SetOut(s.Out)
	cmd.SetErr(s.ErrOut)
	return cmd.ExecuteContext(ctx)
}
