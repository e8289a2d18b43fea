// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/report"
)

// Print writes v in the -o format. exit is the run's outcome, what the command's ExitFor decided
// and will return: a SARIF log carries it as its invocation, the exit code and, when the run did
// not complete (any code but 0 and 1), executionSuccessful false and why.
func (o *OutputFlag) Print(w io.Writer, v any, exit error) error {
	if s, ok := v.(report.SARIFer); ok && o.Format == report.SARIF {
		v = invoked{s, exit}
	}
	return report.Print(w, o.Format, v)
}

// Failed returns err, a failure before the command had a report to print (bad input, an
// unreachable cluster), after writing, when -o is sarif or junit, a log that says the run failed:
// a pipeline that reads the file would otherwise find it empty, and a code-scanning upload would
// see a clean run. tool names the command ("credwatch check").
func (o *OutputFlag) Failed(w io.Writer, tool string, err error) error {
	if err == nil || o.Format != report.SARIF && o.Format != report.JUnit {
		return err
	}
	if perr := report.Print(w, o.Format, failedRun{tool, err}); perr != nil {
		return errors.Join(err, fmt.Errorf("write the failed run's %s: %w", o.Format, perr))
	}
	return err
}

// invocation is how a run that returned err ended.
func invocation(err error) finding.Invocation {
	code := Code(err)
	inv := finding.Invocation{Successful: code == ExitOK || code == ExitFindings, ExitCode: code}
	if !inv.Successful {
		inv.Message = redact.Text(Message(err))
		if inv.Message == "" {
			inv.Message = fmt.Sprintf("exit code %d: %s (docs/exit-codes.md)", code, codeMeaning(code))
		}
	}
	return inv
}

// codeMeaning is what docs/exit-codes.md says an exit code means.
func codeMeaning(code int) string {
	switch code {
	case ExitUsage:
		return "bad flags, bad input or an unreadable file"
	case ExitUnreachable:
		return "the cluster was not reachable, or the check was partial"
	case ExitInterrupted:
		return "interrupted"
	}
	return "the run failed"
}

// invoked is a result whose SARIF log says how the run ended.
type invoked struct {
	report.SARIFer
	exit error
}

func (i invoked) SARIF() any { return finding.WithInvocation(i.SARIFer.SARIF(), invocation(i.exit)) }

// failedRun is a run that failed before it had a result: no findings, and why.
type failedRun struct {
	tool string
	err  error
}

func (f failedRun) SARIF() any {
	log := finding.SARIF(finding.Tool{Name: f.tool, Version: Build().Version}, nil)
	return finding.WithInvocation(log, invocation(f.err))
}

// WriteJUnit is one failing test case that says why the run failed.
func (f failedRun) WriteJUnit(w io.Writer) error {
	return finding.WriteJUnitError(w, f.tool, invocation(f.err).Message)
}
