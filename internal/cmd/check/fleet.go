// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/fleet"
	"github.com/credwatch/credwatch/pkg/report"
)

// parallelCeiling bounds --parallel as --workers is bounded in logs: each cluster checked at once
// holds its clients, connections and report, and a check waits on the network, not a CPU, so
// more clusters at once than this only cost memory and file descriptors.
const parallelCeiling = 256

// fleetFlags select several kubeconfig contexts to check at once.
type fleetFlags struct {
	all      bool
	contexts []string
	parallel int
}

func newFleetFlags(fs *pflag.FlagSet) *fleetFlags {
	f := &fleetFlags{}
	fs.BoolVar(&f.all, "all-contexts", false, "check every context of the kubeconfig, one summary row per cluster")
	fs.StringSliceVar(&f.contexts, "contexts", nil, "check these kubeconfig contexts (comma-separated), one summary row per cluster")
	fs.IntVar(&f.parallel, "parallel", 4, "with --all-contexts or --contexts: how many clusters are checked at once (1 to 256)")
	return f
}

func (f *fleetFlags) enabled() bool { return f.all || len(f.contexts) > 0 }

// validate rejects what makes no sense across clusters.
func (f *fleetFlags) validate(cmd *cobra.Command, o *options) error {
	switch {
	case f.all && len(f.contexts) > 0:
		return cli.Usagef("--all-contexts and --contexts exclude each other")
	case cmd.Flags().Changed("context"):
		return cli.Usagef("--context names one cluster; with --all-contexts or --contexts leave it out")
	case cmd.Flags().Changed("endpoint"):
		return cli.Usagef("--endpoint names members of one cluster; it cannot be used with --all-contexts or --contexts")
	case f.parallel < 1:
		return cli.Usagef("--parallel must be at least 1")
	case f.parallel > parallelCeiling:
		return cli.Usagef("--parallel %d: at most %d: more only costs memory", f.parallel, parallelCeiling)
	case o.output.Format == report.SARIF || o.output.Format == report.JUnit:
		return cli.Usagef("-o %s: with several clusters use table, json or yaml", o.output.Format)
	}
	return nil
}

// runFleet checks every selected context with the same settings and prints one row (table) or
// one document (json, yaml) for all of them.
func (o *options) runFleet(cmd *cobra.Command) error {
	ctxs, err := o.kube.ContextRESTConfigs(o.fleet.contexts, o.fleet.all)
	if err != nil {
		return err
	}
	clusters := make([]fleet.Cluster, len(ctxs))
	for i, c := range ctxs {
		cfg := o.cfg
		cfg.REST = c.REST
		clusters[i] = fleet.Cluster{Context: c.Context, Config: cfg}
	}
	r := fleet.Check(cmd.Context(), clusters, fleet.Options{Parallel: o.fleet.parallel, FailOn: o.failOn.Severity})
	if err := report.Print(o.streams.Out, o.output.Format, r); err != nil {
		return err
	}
	for _, c := range r.Clusters {
		if c.Error != "" {
			o.streams.Infof("%s: %s", c.Context, c.Error)
		}
		if c.Report != nil {
			for _, g := range c.Report.SkippedByReason() {
				o.streams.Infof("%s: skipped %s: %s", c.Context, strings.Join(g.Checks, ", "), g.Reason)
			}
		}
	}
	return fleetExit(r, o.failOn.Severity)
}

// fleetExit is ExitFor across clusters: 3 when a cluster could not be checked or no member of it
// was reachable; else 1 when one has a finding at or above failOn; else 3 when one was partial.
func fleetExit(r *fleet.Report, failOn catalogue.Severity) error {
	switch r.Outcome(failOn) {
	case fleet.Unreachable:
		for _, c := range r.Clusters {
			if c.Summary.Unreachable {
				return cli.Unreachable(fmt.Errorf("cluster %s: %w", c.Context, errors.New(orText(c.Error, "no API server member could be reached"))))
			}
		}
	case fleet.Findings:
		return cli.Silent(cli.ExitFindings)
	case fleet.Partial:
		return cli.Silent(cli.ExitUnreachable)
	}
	return nil
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
