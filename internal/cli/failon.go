// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"github.com/spf13/pflag"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// FailOn is the --fail-on flag of check, cloud, watch, preflight and logs: the severity at or
// above which a finding makes the command exit 1 (default error), or none (report, never exit 1
// on findings: catalogue.None, which nothing is at least). Its completion offers the values.
type FailOn struct {
	raw string
	// Severity is the parsed flag, set by Complete.
	Severity catalogue.Severity
}

// Register adds --fail-on to fs with the command's own usage line.
func (f *FailOn) Register(fs *pflag.FlagSet, usage string) {
	fs.StringVar(&f.raw, "fail-on", string(catalogue.Error), usage)
	FlagValues(fs, "fail-on", severities()...)
}

// Complete parses the flag into Severity; a value that is neither a severity nor none is a usage
// error.
func (f *FailOn) Complete() error {
	sev, err := catalogue.ParseThreshold(f.raw)
	if err != nil {
		return Usagef("--fail-on: %w", err)
	}
	f.Severity = sev
	return nil
}

// CompleteReport completes the two flags every command that reports findings has: -o, then
// --fail-on (the first bad one is the error).
func CompleteReport(output *OutputFlag, failOn *FailOn) error {
	if err := output.Complete(); err != nil {
		return err
	}
	return failOn.Complete()
}

func severities() []string {
	return []string{string(catalogue.Info), string(catalogue.Warning), string(catalogue.Error), string(catalogue.Critical), string(catalogue.None)}
}
