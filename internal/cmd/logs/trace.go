// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/logs/audit"
	"github.com/credwatch/credwatch/pkg/report"
)

// tracing says whether the run reads audit logs for credential ids (--trace-credential,
// --issued-credentials) instead of naming causes.
func (o *options) tracing() bool { return len(o.traceIDs) > 0 || o.issuedIDs }

// validateTrace refuses the flags a credential trace has no use for, and bad ids.
func (o *options) validateTrace(fs *pflag.FlagSet) error {
	flag := "--trace-credential"
	if o.issuedIDs {
		flag = "--issued-credentials"
		if len(o.traceIDs) > 0 {
			return cli.Usagef("logs: --trace-credential and --issued-credentials: give one (ids to trace, or none to list every issued id)")
		}
	}
	for _, f := range []string{"from-cluster", "cluster", "html", "since", "fail-on", "year", "evidence"} {
		if fs.Changed(f) {
			return cli.Usagef("logs %s reads audit log files: --%s does not apply", flag, f)
		}
	}
	switch o.output.Format {
	case report.Table, report.JSON, report.YAML:
	default:
		return cli.Usagef("logs %s: -o %s: want table, json or yaml", flag, o.output.Format)
	}
	for _, id := range o.traceIDs {
		if _, err := audit.NormalizeID(id); err != nil {
			return cli.Usagef("logs --trace-credential: %w", err) // the error quotes the id, unless it is a token
		}
	}
	return nil
}

// runTrace reads the audit logs named, each as the member its path or --host names, and prints
// the trace.
func (o *options) runTrace(ctx context.Context) error {
	files := logs.FileInputs(ctx, o.paths, o.streams.In, o.now(), o.sel)
	if err := o.setHosts(files.Inputs, files.Bad); err != nil {
		return err
	}
	if len(files.Bad) > 0 {
		b := files.Bad[0]
		return cli.Usagef("logs: %s: %s", b.Name, b.Problems[0])
	}
	if len(files.Inputs) == 0 {
		return cli.Usagef("logs: no audit log to read")
	}
	// A file named on the command line must be an audit log; one found in a directory, next to
	// the member's other logs, is skipped when it is not.
	sources := make([]audit.Source, len(files.Inputs))
	for i, in := range files.Inputs {
		sources[i] = audit.Source{Member: in.Host, Name: in.Name, Open: in.Open, Optional: !slices.Contains(o.paths, in.Name)}
	}
	rep, err := audit.Trace(ctx, sources, o.traceIDs)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return cli.Usage(fmt.Errorf("logs: %w", err))
	}
	if !slices.ContainsFunc(rep.Inputs, func(in audit.Input) bool { return in.Read }) {
		return cli.Usagef("logs: no audit log among the inputs (%s: %s)", rep.Inputs[0].Name, rep.Inputs[0].Problems[0])
	}
	if !o.quiet {
		for _, in := range rep.Inputs {
			for _, p := range in.Problems {
				o.streams.Infof("logs: %s: %s", in.Name, p)
			}
		}
	}
	return o.output.Print(o.streams.Out, rep, nil)
}
