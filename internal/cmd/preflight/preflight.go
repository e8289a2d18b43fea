// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package preflight implements `credwatch preflight`: predict, before a control-plane roll
// starts, which tokens and pods it will break.
package preflight

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
	"github.com/credwatch/credwatch/pkg/preflight/live"
	"github.com/credwatch/credwatch/pkg/report"
)

type options struct {
	streams cli.Streams
	output  *cli.OutputFlag
	kube    *cli.KubeFlags

	current, planned string
	capiVersion      string
	// signerMaxExp is the planned signer's Metadata max_token_expiration_seconds.
	signerMaxExp time.Duration
	failOn       cli.FailOn
	// capi names the Cluster API Cluster whose current side live mode reads from the management
	// cluster (--capi-cluster NAME -n NAMESPACE).
	capi *cli.CAPIClusterFlags

	cfg  preflight.Config
	live live.Config
	// read is live.Read (tests give it a fake client).
	read func(context.Context, live.Config) (*input.Set, error)
}

// NewCommand returns `credwatch preflight`.
func NewCommand(s cli.Streams) *cobra.Command { return newCommand(s, live.Read) }

// newCommand is NewCommand with the live reader read.
func newCommand(s cli.Streams, read func(context.Context, live.Config) (*input.Set, error)) *cobra.Command {
	o := &options{streams: s, read: read}
	cmd := &cobra.Command{
		Use:   "preflight (--current FILE|DIR | --capi-cluster NAME [-n NAMESPACE]) [--planned FILE|DIR]",
		Short: "Predict what a planned control-plane roll breaks: issuers, keys, audiences, etcd and load-balancer order",
		Long: strings.TrimSpace(`
Compare the current and the planned control plane and predict, machine by machine and in the
order the roll happens, which members accept which tokens after each step, then report the
findings with their remedy. Nothing is written anywhere.

Offline (--current and --planned) it reads multi-document YAML files, or directories of them
(*.yaml, *.yml, *.json), and contacts no cluster:
  - Cluster API: Cluster, KubeadmControlPlane, KubeadmConfig(Template), Machines, the
    <cluster>-sa Secret (only the kid of its key is kept: a private key is never printed),
    AWSCluster or any provider cluster with a load-balancer health check, clusterctl Provider
    objects (or --capi-version);
  - kubeadm ClusterConfiguration, InitConfiguration, JoinConfiguration (v1beta3 and v1beta4);
  - kube-apiserver and kube-controller-manager static-pod manifests;
  - kops Cluster and InstanceGroup specs;
  - an AuthenticationConfiguration (apiserver.config.k8s.io): the --authentication-config file of
    that side's members (a KubeadmControlPlane's is read from its kubeadmConfigSpec.files);
  - a JWKS document (a JSON object with "keys"): that side's public keys, the external signer's
    FetchKeys set or the /openid/v1/jwks key-file members serve (private members are dropped
    and never printed).
Other kinds are listed as ignored. --signer-max-token-expiration is what the planned external
signer's Metadata declares (preflight never calls the signer).

Live (--capi-cluster NAME -n NAMESPACE, with the management cluster's kubeconfig) reads the current
side from the management cluster instead: the Cluster API Cluster, its KubeadmControlPlane,
Machines and KubeadmConfigs, the <cluster>-sa Secret's public key, the provider cluster and
clusterctl Provider objects, and, through the <cluster>-kubeconfig Secret, the issuer,
audiences and JWKS each workload member serves. Without --planned it predicts a roll of the
current spec (what rolloutAfter or a certificate renewal starts): every machine replaced by one
of the same spec. It only reads (no TokenRequest either); a workload member it cannot reach is
a note in the report. The namespace defaults to the kubeconfig context's; --capi-cluster
NAMESPACE/NAME works too. The spelling --cluster [NAMESPACE/]NAME is a deprecated alias of
--capi-cluster for one release; then --cluster becomes kubectl's kubeconfig cluster, as in watch.

Findings: rollout-planned, issuer-change-drops-old, issuer-placeholder, issuer-join-differs,
sa-key-change, issuer-switch-before-all-accept, audience-change-drops-old,
etcd-removed-before-drain, lb-check-not-ready-aware, legacy-token-secrets, signer-with-key-files,
signer-max-lifetime-too-short, signer-switch-without-old-keys, authn-config-issuer-is-sa-issuer,
no-change
(credwatch explain ID; docs/preflight.md).

Exit codes: 0 nothing at or above --fail-on; 1 a finding at or above it; 2 usage or bad input
(malformed YAML, a KubeadmControlPlane without kubeadmConfigSpec, planned files for another
cluster, a --capi-cluster the management cluster does not have or whose control plane is not a
KubeadmControlPlane); 3 the management cluster could not be read.`),
		Example: `  # a Cluster API upgrade: the live objects against the rendered chart
  credwatch preflight --current ./live --planned ./rendered --capi-version v1.8.1

  # gate a pipeline on warnings, as SARIF for code scanning
  credwatch preflight --current current.yaml --planned planned.yaml --fail-on warning -o sarif

  # what would rolloutAfter do to the running cluster capi-system/w1?
  credwatch preflight --context mgmt --capi-cluster w1 -n capi-system

  # the running cluster against the planned chart
  credwatch preflight --context mgmt --capi-cluster w1 --planned ./rendered`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.execute(cmd.Context()) },
	}
	fs := cmd.Flags()
	o.output = cli.NewOutputFlag(fs, report.Table, report.JSON, report.YAML, report.SARIF, report.JUnit, report.JSONPath)
	fs.StringVar(&o.current, "current", "", "the running control plane: a YAML file or a directory of them")
	fs.StringVar(&o.planned, "planned", "", "the control plane about to be applied: a YAML file or a directory of them")
	fs.StringVar(&o.capiVersion, "capi-version", "", "Cluster API version that will run the roll (vX.Y.Z); overrides clusterctl Provider objects")
	fs.DurationVar(&o.signerMaxExp, "signer-max-token-expiration", 0, "the max token lifetime the planned external signer's Metadata declares (max_token_expiration_seconds, e.g. 24h); unset: not judged")
	o.failOn.Register(fs, "exit 1 when a finding is at or above this severity: info|warning|error|critical; none: report, never exit 1 on findings")
	// --cluster is, for one release, the deprecated alias of --capi-cluster: kubectl's is left out.
	o.kube = cli.NewNamespacedKubeFlags(fs, o.streams.Known, "namespace of the Cluster API Cluster of --capi-cluster (default: the kubeconfig context's)", "cluster")
	o.capi = cli.NewCAPIClusterFlags(fs, o.streams.ErrOut, o.kube, "live mode: read the running control plane of this Cluster API Cluster from the management cluster (`NAME` in -n's namespace, or NAMESPACE/NAME)")
	return cmd
}

// capiVersion is a Cluster API release as --capi-version takes it: vX.Y[.Z], a pre-release allowed.
var capiVersion = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))?(-[0-9A-Za-z.-]+)?$`)

// execute is Complete, Validate, Run.
func (o *options) execute(ctx context.Context) error {
	err := o.complete()
	if err == nil {
		err = o.output.Failed(o.streams.Out, "credwatch preflight", o.validate(ctx))
	}
	if err == nil {
		err = o.run(ctx)
	}
	return err
}

func (o *options) complete() error {
	return cli.CompleteReport(o.output, &o.failOn)
}

func (o *options) validate(ctx context.Context) error {
	switch {
	case o.capi.Given() && o.current != "":
		return cli.Usagef("--current and --capi-cluster both name the running control plane: give one")
	case o.capi.Given():
		if err := o.validateLive(); err != nil {
			return err
		}
	default:
		if _, err := o.capi.Ref(); err != nil { // -n without --capi-cluster
			return err
		}
		if o.current == "" || o.planned == "" {
			return cli.Usagef("--current and --planned are both required (or --capi-cluster, for live mode)")
		}
	}
	if o.capiVersion != "" && !strings.HasPrefix(o.capiVersion, "v") {
		o.capiVersion = "v" + o.capiVersion
	}
	if o.capiVersion != "" && !capiVersion.MatchString(o.capiVersion) {
		// A version the comparisons cannot read would turn the version-dependent findings off.
		return cli.Usagef("--capi-version %q: want a Cluster API release, vX.Y or vX.Y.Z (e.g. v1.8.1)", o.capiVersion)
	}
	var err error
	if o.current != "" {
		if o.cfg.Current, err = input.Load(ctx, o.current); err != nil {
			return cli.Usage(err)
		}
	}
	if o.planned != "" {
		if o.cfg.Planned, err = input.Load(ctx, o.planned); err != nil {
			return cli.Usage(err)
		}
	}
	if o.signerMaxExp < 0 {
		return cli.Usagef("--signer-max-token-expiration %s: want a positive duration", o.signerMaxExp)
	}
	o.cfg.CAPIVersion = o.capiVersion
	o.cfg.Signer = preflight.Signer{MaxTokenExpiration: o.signerMaxExp}
	o.cfg.Reroll = o.capi.Given() && o.planned == ""
	return nil
}

// validateLive turns --capi-cluster, -n and the kubeconfig flags into the live reader's
// configuration.
func (o *options) validateLive() error {
	ref, err := o.capi.Ref()
	if err != nil {
		return err
	}
	rc, err := o.kube.RESTConfig()
	if err != nil {
		return err
	}
	o.live = live.Config{Mgmt: rc, Namespace: ref.Namespace, Name: ref.Name, Timeout: o.kube.Timeout, Known: o.streams.Known}
	return nil
}

func (o *options) run(ctx context.Context) error {
	r, err := o.predict(ctx)
	if err != nil {
		return o.output.Failed(o.streams.Out, "credwatch preflight", err)
	}
	r.FailOn, r.ToolVersion = o.failOn.Severity, cli.Build().Version
	var exit error
	if finding.AnyAtLeast(r.Findings, o.failOn.Severity) {
		exit = cli.Silent(cli.ExitFindings)
	}
	if err := o.output.Print(o.streams.Out, r, exit); err != nil {
		return err
	}
	return exit
}

// predict reads the live side when asked, and predicts the roll.
func (o *options) predict(ctx context.Context) (*preflight.Report, error) {
	if o.capi.Given() {
		set, err := o.read(ctx, o.live)
		var ie *input.InputError
		switch {
		case errors.Is(err, live.ErrNotFound), errors.Is(err, live.ErrUnsupported), errors.As(err, &ie):
			return nil, cli.Usage(err)
		case err != nil:
			return nil, cli.Unreachable(err)
		}
		o.cfg.Current = set
	}
	r, err := preflight.Run(o.cfg)
	if err != nil {
		return nil, cli.Usage(err) // every error Run returns is about the input
	}
	return r, nil
}
