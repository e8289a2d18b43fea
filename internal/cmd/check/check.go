// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package check implements `credwatch check`: ask every kube-apiserver member directly which
// tokens it accepts, and why it rejects the others.
package check

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/deploy"
	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/check/memberflags"
	"github.com/credwatch/credwatch/internal/userfile"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/clusterapi"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/limits"
	"github.com/credwatch/credwatch/pkg/report"
)

type options struct {
	streams cli.Streams
	kube    *cli.KubeFlags
	output  *cli.OutputFlag
	fleet   *fleetFlags

	members      *memberflags.Flags
	failOn       cli.FailOn
	publicCAFile string
	noCloud      bool
	cloudLogin   bool
	cloudLoginTO time.Duration
	printRBAC    bool
	// capi names a Cluster API Cluster on the management cluster the kubeconfig reaches
	// (--capi-cluster NAME -n NAMESPACE, as preflight's): its workload cluster is checked, its
	// members related to its Machines.
	capi       *cli.CAPIClusterFlags
	clusterRef *clusterapi.Ref

	cfg check.Config
}

// NewCommand returns `credwatch check`.
func NewCommand(s cli.Streams) *cobra.Command {
	o := &options{streams: s}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Ask every API server member which tokens it accepts: trust matrix, drift, public issuer, tokens in use, liveness",
		Long: strings.TrimSpace(`
Find every kube-apiserver behind the cluster endpoint (EndpointSlices of default/kubernetes,
kube-system static pods, --endpoint), talk to each directly (TLS verified against the cluster CA
as kubernetes.default.svc), and report:

  - the trust matrix: a short-lived token minted through each member, reviewed by every member;
  - differences in issuers, keys, audiences and token lifetimes between members;
  - a public issuer's discovery document and JWKS (IRSA, workload identity);
  - tokens in use: projected tokens, legacy secret-based tokens, per-member token metrics;
  - control-plane liveness: controller leases, uninitialized nodes;
  - cloud-provider credentials (vSphere, OpenStack) the cluster runs on, who consumes them, which
    consumers must restart, and their symptoms (as credwatch cloud; no live login unless
    --cloud-login is given; --no-cloud leaves them out).

It writes only TokenRequests and TokenReviews (and the probe service account with
--create-probe-sa). With less RBAC it skips what it cannot see and lists the skipped checks.

Cluster API: with the management cluster's kubeconfig, --capi-cluster NAME -n NAMESPACE
(or --capi-cluster NAMESPACE/NAME; the namespace defaults to the kubeconfig context's) checks
that Cluster's workload cluster through its <cluster>-kubeconfig Secret (as clusterctl get
kubeconfig reads it) and names, for each member, the control-plane Machine it runs on, the
Machine's phase, and the Cluster API version from clusterctl's inventory (which decides the order
of a roll). Only Secrets, Clusters, Machines and clusterctl Providers are read there. The
spelling --cluster NAMESPACE/NAME is a deprecated alias of --capi-cluster for one release; then
--cluster becomes kubectl's kubeconfig cluster, as in watch.

Many clusters: --all-contexts (or --contexts a,b,c) checks every (or each named) kubeconfig
context, --parallel at a time, and prints one row per cluster: worst finding, members up, broken
trust pairs, partial or not; -o json|yaml gives every cluster's full report in one
FleetCheckReport. The exit code is the worst cluster's: a cluster not reached first, then findings,
then a partial check.

Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it; 2 usage; 3 no member
reachable, or nothing at or above --fail-on but a core check was skipped (partial).`),
		Example: `  # the whole picture, as a table
  credwatch check --create-probe-sa

  # also review a pod's token on every member; fail the pipeline on warnings
  credwatch check --token-file ./token --fail-on warning -o sarif

  # a Cluster API workload cluster, from its management cluster
  credwatch check --context mgmt --capi-cluster w1 -n org-a --create-probe-sa

  # every cluster of the kubeconfig, four at a time
  credwatch check --all-contexts --create-probe-sa`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.printRBAC {
				_, err := o.streams.Out.Write(deploy.ClusterRole())
				return err
			}
			if err := o.complete(cmd); err != nil {
				return o.output.Failed(o.streams.Out, "credwatch check", err)
			}
			return o.run(cmd)
		},
	}
	fs := cmd.Flags()
	// --cluster is, for one release, the deprecated alias of --capi-cluster: kubectl's is left out.
	o.kube = cli.NewNamespacedKubeFlags(fs, o.streams.Known, "namespace of the Cluster API Cluster of --capi-cluster (default: the kubeconfig context's)", "cluster")
	o.output = cli.NewOutputFlag(fs, report.Table, report.JSON, report.YAML, report.SARIF, report.JUnit, report.JSONPath)
	o.members = memberflags.New(fs, o.streams.Known)
	o.failOn.Register(fs, "exit 1 when a finding is at or above this severity: info|warning|error|critical; none: report, never exit 1 on findings")
	fs.BoolVar(&o.printRBAC, "print-rbac", false, "print the least-privilege RBAC check needs (a Namespace, the probe ServiceAccount, Roles and ClusterRoles; pipe to kubectl apply -f -) and exit; contacts no cluster")
	fs.StringVar(&o.publicCAFile, "public-issuer-ca", "", "PEM bundle trusted (with the system roots) when fetching a public issuer")
	fs.BoolVar(&o.noCloud, "no-cloud", false, "leave out the cloud-provider credentials (the cloud-credentials check is skipped)")
	fs.BoolVar(&o.cloudLogin, "cloud-login", false, "log in to vCenter/Keystone with each cloud credential found (off: repeated failed logins can lock accounts)")
	fs.DurationVar(&o.cloudLoginTO, "cloud-login-timeout", 15*time.Second, "bound of each cloud login attempt (with --cloud-login)")
	o.capi = cli.NewCAPIClusterFlags(fs, o.streams.ErrOut, o.kube, "a Cluster API Cluster on the management cluster the kubeconfig reaches (`NAME` in -n's namespace, or NAMESPACE/NAME): check its workload cluster (through its <cluster>-kubeconfig Secret) and name the Machine each member runs on")
	o.fleet = newFleetFlags(fs)
	return cmd
}

func (o *options) complete(cmd *cobra.Command) error {
	if err := cli.CompleteReport(o.output, &o.failOn); err != nil {
		return err
	}
	if o.noCloud && o.cloudLogin {
		return cli.Usagef("--no-cloud and --cloud-login contradict each other")
	}
	if o.cloudLoginTO <= 0 {
		return cli.Usagef("--cloud-login-timeout must be positive")
	}
	if err := o.members.Apply(cmd.Context(), &o.cfg); err != nil {
		return err
	}
	var ca []byte
	if o.publicCAFile != "" {
		b, err := userfile.ReadFile(cmd.Context(), o.publicCAFile, limits.File)
		if err != nil {
			return cli.Usagef("--public-issuer-ca %w", err)
		}
		ca = b
	}
	var (
		rc  *rest.Config
		err error
	)
	if o.capi.Given() && o.fleet.enabled() {
		return cli.Usagef("--capi-cluster checks one workload cluster: it cannot be combined with --all-contexts or --contexts")
	}
	if o.clusterRef, err = o.capi.Ref(); err != nil {
		return err
	}
	if o.fleet.enabled() {
		if err := o.fleet.validate(cmd, o); err != nil {
			return err
		}
	} else if rc, err = o.kube.RESTConfig(); err != nil {
		return err
	}
	o.cfg.REST, o.cfg.PublicIssuerCA, o.cfg.Timeout = rc, ca, o.kube.Timeout
	o.cfg.Cloud = check.CloudConfig{Skip: o.noCloud, Login: o.cloudLogin, LoginOptions: cloud.LoginOptions{Timeout: o.cloudLoginTO}}
	return nil
}

func (o *options) run(cmd *cobra.Command) error {
	if o.fleet.enabled() {
		return o.runFleet(cmd)
	}
	snap, err := o.fetch(cmd.Context())
	if err != nil {
		return o.output.Failed(o.streams.Out, "credwatch check", err)
	}
	r := check.Run(snap, check.Registry())
	r.FailOn = o.failOn.Severity
	r.ToolVersion = cli.Build().Version
	exit := ExitFor(r, o.failOn.Severity)
	if err := o.output.Print(o.streams.Out, r, exit); err != nil {
		return err
	}
	for _, g := range r.SkippedByReason() {
		o.streams.Infof("skipped %s: %s", strings.Join(g.Checks, ", "), g.Reason)
	}
	return exit
}

// fetch reads what the checks judge: from the workload cluster with --capi-cluster, after making
// sure the cluster endpoint answers when no --endpoint names the members.
func (o *options) fetch(ctx context.Context) (*check.Snapshot, error) {
	if o.clusterRef != nil {
		if err := o.workload(ctx); err != nil {
			return nil, err
		}
	}
	if len(o.cfg.Endpoints) == 0 {
		// With no --endpoint, every member is found through the cluster endpoint: when it does not
		// answer, nothing else would, and each call would wait its own --timeout.
		if err := check.Probe(ctx, o.cfg); err != nil {
			return nil, cli.Unreachable(fmt.Errorf("cluster not reachable: %w", err))
		}
	}
	snap, err := check.Fetch(ctx, o.cfg)
	if err != nil {
		return nil, cli.Usage(err)
	}
	return snap, nil
}

// workload turns the management cluster's configuration into the workload cluster's, read from
// the Cluster's <cluster>-kubeconfig Secret, and reads the control-plane Machines to relate the
// members to. Machines that cannot be read leave the check without them, said on stderr.
func (o *options) workload(ctx context.Context) error {
	wl, rd, err := cli.Workload(ctx, o.cfg.REST, *o.clusterRef, o.kube)
	if err != nil {
		return err
	}
	ca, err := rd.ControlPlane(ctx, *o.clusterRef)
	if err != nil {
		o.streams.Infof("not relating members to Machines: %v", err)
	} else if ca.Version == "" {
		o.streams.Infof("Cluster API version unknown: the management cluster has no clusterctl inventory (providers.clusterctl.cluster.x-k8s.io)")
	}
	o.cfg.REST, o.cfg.ClusterAPI = wl, ca
	return nil
}

// ExitFor maps a report to the documented exit code: 3 when no member was reachable; else 1 when a
// finding is at or above failOn; else 3 when a core check was skipped; else 0.
func ExitFor(r *check.Report, failOn catalogue.Severity) error {
	switch {
	case r.Unreachable:
		return cli.Unreachable(errors.New("no API server member could be reached: " + firstError(r)))
	case finding.AnyAtLeast(r.Findings, failOn):
		return cli.Silent(cli.ExitFindings)
	case r.Partial:
		return cli.Silent(cli.ExitUnreachable)
	}
	return nil
}

func firstError(r *check.Report) string {
	for _, m := range r.Members {
		if m.Error != "" {
			return fmt.Sprintf("%s: %s", m.Name, m.Error)
		}
	}
	for k, v := range r.Sources {
		return k + ": " + v
	}
	return "no members found"
}
