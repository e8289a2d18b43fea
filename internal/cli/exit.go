// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package cli holds what every credwatch command shares: streams, exit codes, the -o flag, the
// kubectl connection flags and the kubectl-plugin display name. Commands live in internal/cmd/...
package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/credwatch/credwatch/pkg/report"
)

// Exit codes. They are documented in docs/exit-codes.md; scripts rely on them.
const (
	ExitOK          = 0   // success; nothing at or above --fail-on; token accepted
	ExitFindings    = 1   // findings at or above --fail-on; token rejected
	ExitUsage       = 2   // bad flags, bad input, unreadable file
	ExitUnreachable = 3   // cluster unreachable, or the check was partial
	ExitInternal    = 4   // any other failure: an I/O or lab error, a bug; never a verdict
	ExitTimeout     = 124 // an unclassified deadline; reserved: no command produces it today
	ExitInterrupted = 130 // interrupted (Ctrl-C)
	ExitBrokenPipe  = 141 // watch: stdout is a pipe whose reader went away (128+SIGPIPE, as a shell reports kubectl killed by it)
)

// ExitError carries an exit code. A nil Err means the command already said all it had to say.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Usage marks err as bad input or usage (exit 2). An input abandoned on a signal (err wraps
// context.Canceled: a FIFO or pipe read through internal/userfile) stays an interruption, exit 130.
func Usage(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &ExitError{Code: ExitUsage, Err: err}
}

// Usagef is Usage(fmt.Errorf(...)).
func Usagef(format string, args ...any) error { return Usage(fmt.Errorf(format, args...)) }

// Unreachable marks err as "could not reach the cluster" (exit 3).
func Unreachable(err error) error { return &ExitError{Code: ExitUnreachable, Err: err} }

// Silent exits with code and prints nothing more.
func Silent(code int) error { return &ExitError{Code: code} }

// Code maps an error to the process exit code.
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return ExitTimeout
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	return ExitInternal // an error nobody classified says nothing about the cluster or the token
}

// Message is the one line printed for err, or "" when nothing should be printed: in plain words
// (no Go type names or client-go wording) and bounded (report.Plain).
func Message(err error) string {
	var ee *ExitError
	if errors.As(err, &ee) && ee.Err == nil {
		return ""
	}
	if err == nil {
		return ""
	}
	return report.Plain(err.Error())
}
