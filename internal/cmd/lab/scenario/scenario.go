// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package scenario implements `credwatch lab scenario [NAME]`: run one field scenario end to end on
// a lab of its own (start, tenants, steps, evidence, teardown), or list the scenarios.
package scenario

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/lab"
	labcapi "github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
	labscenario "github.com/credwatch/credwatch/pkg/lab/scenario"
	"github.com/credwatch/credwatch/pkg/report"
)

type options struct {
	streams cli.Streams
	output  *cli.OutputFlag
	name    string
	version string
	dir     string
	binDir  string
	members int
	window  time.Duration
	quiet   bool
	list    bool
	capi    labscenario.CAPIOptions
}

// NewCommand returns `credwatch lab scenario`.
func NewCommand(s cli.Streams) *cobra.Command {
	o := &options{streams: s}
	cmd := &cobra.Command{
		Use:   "scenario [NAME]",
		Short: "Reproduce a credential fault from the field on a lab of its own and print the evidence (no NAME: list them)",
		Long: strings.TrimSpace(`
Runs one scenario end to end in this process: starts a lab (real etcd and kube-apiservers behind a
load balancer), starts tenants that call the API through the load balancer with kubelet-style pod
tokens, performs the scenario's steps, prints the evidence (per-member tallies of what the tenants
got back, the "Unable to authenticate the request" lines each member logged, probes) and tears
the lab down. Progress goes to stderr, the evidence to stdout.

The cloud scenarios (cloud-password-rotated in the in-tree and external vSphere eras, and
cloud-password-rotated-openstack) run a lab of one member and real nodes beside govmomi's vCenter
simulator or a real Keystone, in the credwatch-cloudlab program that ` + "`make build`" + ` puts beside
credwatch (the simulator is too heavy for this binary); their evidence is what each real
component did, step by step.

The Cluster API scenarios (capi-roll, capi-sa-secret-deleted, capi-issuer-placeholder) run the real Cluster API managers
(--capi) on a one-member management lab; KubeadmControlPlane makes a kubeadm control plane on lab
hosts behind a LabCluster balancer (--lb-check, --deregistration) and rolls it 1 -> 2 -> 1 while
tenant pods call it. Their evidence is the roll's phases as Cluster API went through them and what
each machine's apiserver answered and logged. They need ` + "`make capi-binaries`" + `.

The external-signer scenarios (signer-key-divergence, signer-stale) run on a lab of v1.36.3
members that sign through external JWT signers (KEP-740: one lab signer per member host, speaking
the k8s.io/externaljwt v1 API on a Unix socket, and no key files); the scenario changes what one
signer serves. Their evidence adds what each member logged of its signer's keys and what
credwatch check raised.

The structured-authentication scenarios (authn-config-drift, jwt-issuer-jwks-unreachable) run on
a lab of v1.36.3 members that read an AuthenticationConfiguration (KEP-3331) whose JWT
authenticator trusts the lab's OIDC issuer (discovery and JWKS over HTTPS on the lab network); the
scenario edits members' files, or makes the issuer's JWKS fail while a member joins. Their evidence
adds ID-token probes by member, what each member logged of its configuration, and what credwatch
check raised.

With --list, or without NAME, it lists the scenarios with the environment each one runs in (a
plain lab and its line, a lab with external signers or an AuthenticationConfiguration, a cloud era, Cluster API) and what each one
does.`),
		Example: `  # a roll in which a new control-plane member brings its own service-account key
  credwatch lab scenario key-drift

  # the same on the old line, as JSON
  credwatch lab scenario key-drift --version v1.30.14 -o json

  # every scenario, with the environment it runs in
  credwatch lab scenario --list

  # the second field report: the vSphere password rotated under a kubespray cluster
  credwatch lab scenario cloud-password-rotated

  # the first field report's roll with Cluster API v1.8.1 (etcd member removed before the drain)
  credwatch lab scenario capi-roll --capi v1.8.1 --lb-check tls`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: cli.CompleteFrom(labscenario.Names),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.version, "version", "", "kube-apiserver line of the lab: "+lab.DefaultVersion+" (default) or "+lab.OldVersion)
	fs.StringVar(&o.dir, "dir", "", "lab state directory, kept afterwards (default: a temporary directory, removed afterwards)")
	fs.StringVar(&o.binDir, "bin-dir", "", "lab binaries (default: $CREDWATCH_LAB_BIN or .lab-cache/bin; make lab-binaries)")
	fs.IntVar(&o.members, "members", 3, "apiservers (and etcd members) the lab starts with")
	fs.DurationVar(&o.window, "window", labscenario.DefaultWindow, "how long each phase watches the tenants after its change")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress lines on stderr")
	fs.BoolVar(&o.list, "list", false, "list the scenarios and exit (the same as no NAME)")
	fs.StringVar(&o.capi.Version, "capi", "", "Cluster API scenarios: the release, "+strings.Join(labcapi.Versions(), " or ")+" (default "+labcapi.V181+")")
	fs.StringVar(&o.capi.HealthCheck, "lb-check", "", "Cluster API scenarios: the LabCluster balancer's health check, tcp, tls (default) or https-readyz")
	fs.StringVar(&o.capi.Deregistration, "deregistration", "", "Cluster API scenarios: when a machine leaves the balancer, on-machine-delete (default) or on-drain")
	fs.BoolVar(&o.capi.ProviderInCluster, "provider-in-cluster", false, "capi-self-managed-roll: after the move, run the lab provider as a Pod against the lab's cloud API (not yet proven)")
	o.output = cli.NewOutputFlag(fs, report.Table, report.JSON, report.YAML)
	return cmd
}

func (o *options) complete(args []string) error {
	if len(args) == 1 {
		if o.list {
			return cli.Usagef("--list takes no scenario name (got %q)", args[0])
		}
		o.name = args[0]
	}
	if err := o.output.Complete(); err != nil {
		return err
	}
	return o.validate()
}

func (o *options) validate() error {
	if o.name != "" {
		s, ok := labscenario.Get(o.name)
		if !ok {
			return cli.Usagef("scenario %q: unknown; one of %s", o.name, strings.Join(labscenario.Names(), ", "))
		}
		if err := o.validateCAPI(s); err != nil {
			return err
		}
		if _, cloud := s.Environment.(labscenario.CloudEra); cloud && o.version != "" {
			return cli.Usagef("--version %s: scenario %s runs on its cloud lab's own line", o.version, s.Name)
		}
		if v := s.Environment.StartsOn(); v != "" && o.version != "" && o.version != v {
			return cli.Usagef("--version %s: scenario %s always starts on %s", o.version, s.Name, v)
		}
	}
	if o.version != "" && o.version != lab.DefaultVersion && o.version != lab.OldVersion {
		return cli.Usagef("--version %q: want %s or %s", o.version, lab.DefaultVersion, lab.OldVersion)
	}
	if o.members < 2 || o.members > 7 {
		return cli.Usagef("--members %d: want 2..7", o.members)
	}
	if o.window < time.Second || o.window > 10*time.Minute {
		return cli.Usagef("--window %s: want 1s..10m", o.window)
	}
	if o.binDir != "" {
		if _, err := lab.Binary(o.binDir, "", "etcd"); err != nil {
			return cli.Usagef("--bin-dir %q: %v (run make lab-binaries)", o.binDir, err)
		}
	}
	return nil
}

// validateCAPI checks --capi, --lb-check, --deregistration and --provider-in-cluster: only
// Cluster API scenarios take them (the last only the self-managed one), with the values the
// lab builds and knows.
func (o *options) validateCAPI(s labscenario.Scenario) error {
	c := o.capi
	if _, ok := s.Environment.(labscenario.ClusterAPI); !ok {
		if c != (labscenario.CAPIOptions{}) {
			return cli.Usagef("--capi, --lb-check, --deregistration and --provider-in-cluster are for Cluster API scenarios; %s is not one", s.Name)
		}
		return nil
	}
	if c.ProviderInCluster && s.Name != labscenario.CAPISelfManagedRoll {
		return cli.Usagef("--provider-in-cluster is for %s, the scenario that moves the cluster into itself", labscenario.CAPISelfManagedRoll)
	}
	if c.Version != "" && !slices.Contains(labcapi.Versions(), c.Version) {
		return cli.Usagef("--capi %q: want one of %v", c.Version, labcapi.Versions())
	}
	if c.HealthCheck != "" && !slices.Contains(lb.HealthChecks(), lb.HealthCheck(c.HealthCheck)) {
		return cli.Usagef("--lb-check %q: want tcp, tls or https-readyz", c.HealthCheck)
	}
	if c.Deregistration != "" && c.Deregistration != string(infra.OnMachineDelete) && c.Deregistration != string(infra.OnDrain) {
		return cli.Usagef("--deregistration %q: want %s or %s", c.Deregistration, infra.OnMachineDelete, infra.OnDrain)
	}
	return nil
}

func (o *options) run(ctx context.Context) error {
	if o.name == "" {
		return report.Print(o.streams.Out, o.output.Format, labscenario.NewList())
	}
	s, _ := labscenario.Get(o.name)
	dir := o.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "credwatch-scenario-")
		if err != nil {
			return fmt.Errorf("lab directory: %w", err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	ro := labscenario.RunOptions{Dir: dir, BinDir: o.binDir, Version: o.version, Members: o.members, Window: o.window, CAPI: o.capi}
	if !o.quiet {
		ro.Log = o.streams.ErrOut
	}
	ev, err := labscenario.Run(ctx, s, ro)
	if ev != nil {
		if perr := report.Print(o.streams.Out, o.output.Format, ev); perr != nil && err == nil {
			err = perr
		}
	}
	return err
}
