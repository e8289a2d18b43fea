// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package preflight implements `credwatch preflight`: predict, before a control-plane roll
// starts, which tokens and pods it will break.
package preflight

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
	"github.com/credwatch/credwatch/pkg/report"
)

type options struct {
	streams cli.Streams
	output  *cli.OutputFlag

	current, planned string
	capiVersion      string
	failOn           cli.FailOn
	// cluster is NAMESPACE/NAME for live mode (reading the current side from a management
	// cluster); not offered as a flag yet.
	cluster string

	cfg preflight.Config
}

// NewCommand returns `credwatch preflight`.
func NewCommand(s cli.Streams) *cobra.Command {
	o := &options{streams: s}
	cmd := &cobra.Command{
		Use:   "preflight --current FILE|DIR --planned FILE|DIR",
		Short: "Predict what a planned control-plane roll breaks: issuers, keys, audiences, etcd and load-balancer order",
		Long: strings.TrimSpace(`
Compare the current and the planned control plane and predict, machine by machine and in the
order the roll happens, which members accept which tokens after each step, then report the
findings with their remedy. Nothing is written anywhere, and no cluster is contacted.

It reads multi-document YAML files, or directories of them (*.yaml, *.yml, *.json):
  - Cluster API: Cluster, KubeadmControlPlane, KubeadmConfig(Template), Machines, the
    <cluster>-sa Secret (only the kid of its key is kept: a private key is never printed),
    AWSCluster or any provider cluster with a load-balancer health check, clusterctl Provider
    objects (or --capi-version);
  - kubeadm ClusterConfiguration, InitConfiguration, JoinConfiguration (v1beta3 and v1beta4);
  - kube-apiserver static-pod manifests;
  - kops Cluster and InstanceGroup specs.
Other kinds are listed as ignored.

Findings: rollout-planned, issuer-change-drops-old, issuer-placeholder, issuer-join-differs,
sa-key-change, issuer-switch-before-all-accept, audience-change-drops-old,
etcd-removed-before-drain, lb-check-not-ready-aware, legacy-token-secrets, no-change
(credwatch explain ID; docs/preflight.md).

Exit codes: 0 nothing at or above --fail-on; 1 a finding at or above it; 2 usage or bad input
(malformed YAML, a KubeadmControlPlane without kubeadmConfigSpec, planned files for another
cluster).`),
		Example: `  # a Cluster API upgrade: the live objects against the rendered chart
  credwatch preflight --current ./live --planned ./rendered --capi-version v1.8.1

  # gate a pipeline on warnings, as SARIF for code scanning
  credwatch preflight --current current.yaml --planned planned.yaml --fail-on warning -o sarif`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return o.execute() },
	}
	fs := cmd.Flags()
	o.output = cli.NewOutputFlag(fs, report.Table, report.JSON, report.YAML, report.SARIF)
	fs.StringVar(&o.current, "current", "", "the running control plane: a YAML file or a directory of them")
	fs.StringVar(&o.planned, "planned", "", "the control plane about to be applied: a YAML file or a directory of them")
	fs.StringVar(&o.capiVersion, "capi-version", "", "Cluster API version that will run the roll (vX.Y.Z); overrides clusterctl Provider objects")
	o.failOn.Register(fs, "exit 1 when a finding is at or above this severity: info|warning|error|critical")
	return cmd
}

// execute is Complete, Validate, Run.
func (o *options) execute() error {
	err := o.complete()
	if err == nil {
		err = o.validate()
	}
	if err != nil {
		return err
	}
	return o.run()
}

func (o *options) complete() error {
	return cli.CompleteReport(o.output, &o.failOn)
}

func (o *options) validate() error {
	switch {
	case o.cluster != "":
		return cli.Usagef("live mode (--cluster) is not built yet")
	case o.current == "" || o.planned == "":
		return cli.Usagef("--current and --planned are both required")
	}
	if o.capiVersion != "" && !strings.HasPrefix(o.capiVersion, "v") {
		o.capiVersion = "v" + o.capiVersion
	}
	var err error
	if o.cfg.Current, err = input.Load(o.current); err != nil {
		return cli.Usage(err)
	}
	if o.cfg.Planned, err = input.Load(o.planned); err != nil {
		return cli.Usage(err)
	}
	o.cfg.CAPIVersion = o.capiVersion
	return nil
}

func (o *options) run() error {
	r, err := preflight.Run(o.cfg)
	if err != nil {
		return cli.Usage(err) // every error Run returns is about the input
	}
	r.FailOn, r.ToolVersion = o.failOn.Severity, cli.Build().Version
	if err := report.Print(o.streams.Out, o.output.Format, r); err != nil {
		return err
	}
	if finding.AnyAtLeast(r.Findings, o.failOn.Severity) {
		return cli.Silent(cli.ExitFindings)
	}
	return nil
}
