// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package cloud implements `credwatch cloud`: find the cloud-provider credentials a cluster runs
// on, test them against vCenter or Keystone, and name the consumers that must be restarted.
package cloud

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/report"
)

type options struct {
	streams   cli.Streams
	kube      *cli.KubeFlags
	output    *cli.OutputFlag
	configs   []string
	noLogin   bool
	noCluster bool
	insecure  []string
	failOn    cli.FailOn
	loginTO   time.Duration
	interval  time.Duration
	loopWait  time.Duration
	noHost    bool

	insecureSet map[cloud.Provider]bool
	explicit    bool // --kubeconfig or --context given
}

// NewCommand returns `credwatch cloud`.
func NewCommand(s cli.Streams) *cobra.Command {
	o := &options{streams: s}
	cmd := &cobra.Command{
		Use:   "cloud",
		Short: "Find the cluster's vSphere/OpenStack credentials, test them, and name what must be restarted",
		Long: strings.TrimSpace(`
Find the cloud-provider credentials the cluster runs on (config files given with --config, the
--cloud-config of kube-apiserver, kube-controller-manager and cloud-controller-manager Pods, the
Secrets those configs name, the usual CPI and CSI Secrets and ConfigMaps), log in with each for real
(vSphere: log in, read the session, log out; OpenStack: ask Keystone v3 for a token), and report:
valid, rejected (the provider's InvalidLogin or HTTP 401), unreachable, or not tested; which
components consume each credential; and which of them must be restarted because they read it only at
start-up and started before it last changed. With --config, the host's own processes that read those
files (kubelets, and control-plane components systemd runs) are consumers too, found in /proc; a
kubelet the cluster's Events show restarting in a loop is waited for (--kubelet-wait) until it
starts again, and reported as kubelet-crashloop with the credential it reads. Also reports the symptoms: stale controller leases,
crash-looping controllers with cloud errors in their logs, nodes left uninitialized.

Passwords are never printed; one sent to a Keystone auth-url on plain http is reported
(cloud-credential-plaintext). Each distinct credential is tried once per run, logins to one server are
spaced (--login-interval), and an account gets at most one rejected attempt per run: directory
services lock accounts after repeated failures. --no-login skips every live login.

Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it; 2 a --config path could not
be read or parsed (or other usage errors); 3 the cluster could not be read completely; 130
interrupted (SIGINT/SIGTERM), even when the report printed before it has no finding.`),
		Example: `  # on a control-plane node: kubespray's config and the cluster's Secrets
  credwatch cloud --config /etc/kubernetes/cloud_config

  # only the files, no cluster, no live login
  credwatch cloud --no-cluster --no-login --config ./vsphere.conf --config ./openstack/

  # a self-signed vCenter without ca-file in its config
  credwatch cloud --insecure-skip-tls-verify=vsphere -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(cmd); err != nil {
				return o.output.Failed(o.streams.Out, "credwatch cloud", err)
			}
			return o.run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	// kubectl's --insecure-skip-tls-verify means the API server; here it means the cloud provider.
	o.kube = cli.NewKubeFlagsExcept(fs, o.streams.Known, "insecure-skip-tls-verify")
	o.output = cli.NewOutputFlag(fs, report.Table, report.JSON, report.YAML, report.SARIF, report.JUnit, report.JSONPath)
	fs.StringArrayVar(&o.configs, "config", nil, "a cloud config file or a folder of them (repeatable): cloud_config, vsphere.conf, vSphere CPI YAML/INI, cloud.conf, clouds.yaml")
	fs.BoolVar(&o.noLogin, "no-login", false, "do not log in to any provider (find and judge only)")
	fs.BoolVar(&o.noCluster, "no-cluster", false, "do not read the cluster; only the --config files")
	fs.StringSliceVar(&o.insecure, "insecure-skip-tls-verify", nil, "do not verify the TLS certificate of these providers: vsphere,openstack (no value: both)")
	fs.Lookup("insecure-skip-tls-verify").NoOptDefVal = "vsphere,openstack"
	o.failOn.Register(fs, "exit 1 when a finding is at or above this severity: info|warning|error|critical; none: report, never exit 1 on findings")
	fs.DurationVar(&o.loginTO, "login-timeout", 15*time.Second, "bound of each login attempt (connect, TLS, login, logout)")
	fs.DurationVar(&o.interval, "login-interval", time.Second, "minimum time between two login attempts against the same server")
	fs.DurationVar(&o.loopWait, "kubelet-wait", 12*time.Second, "how long to wait for a crash-looping kubelet to start again, to see which --config it reads (kubelet.service restarts it every 10 s; 0: do not wait)")
	fs.BoolVar(&o.noHost, "no-host-processes", false, "do not read this host's processes (/proc) for consumers of the --config files")
	return cmd
}

func (o *options) complete(cmd *cobra.Command) error {
	if err := cli.CompleteReport(o.output, &o.failOn); err != nil {
		return err
	}
	var err error
	if o.insecureSet, err = insecureProviders(o.insecure); err != nil {
		return err
	}
	if o.loginTO <= 0 || o.interval < 0 || o.loopWait < 0 {
		return cli.Usagef("--login-timeout must be positive, --login-interval and --kubelet-wait not negative")
	}
	o.explicit = cmd.Flags().Changed("kubeconfig") || cmd.Flags().Changed("context")
	if o.noCluster && len(o.configs) == 0 {
		return cli.Usagef("--no-cluster needs at least one --config")
	}
	return nil
}

// insecureProviders reads --insecure-skip-tls-verify: the providers whose TLS certificate is not
// verified. "both" (what the usage error suggests), "all" and "true" are both providers.
func insecureProviders(values []string) (map[cloud.Provider]bool, error) {
	set := map[cloud.Provider]bool{}
	for _, p := range values {
		switch strings.ToLower(strings.TrimSpace(p)) {
		case "vsphere":
			set[cloud.VSphere] = true
		case "openstack":
			set[cloud.OpenStack] = true
		case "both", "all", "true":
			set[cloud.VSphere], set[cloud.OpenStack] = true, true
		case "false":
		default:
			return nil, cli.Usagef("--insecure-skip-tls-verify %q: want vsphere, openstack or both", p)
		}
	}
	return set, nil
}

// client returns the cluster client, or nil when the cluster is skipped; partial says the cluster
// was wanted but could not be read.
func (o *options) client() (cs kubernetes.Interface, partial bool, err error) {
	if o.noCluster {
		return nil, false, nil
	}
	if !o.explicit && len(o.configs) > 0 && !kubeconfigExists() {
		o.streams.Infof("cloud: no kubeconfig; checking the --config files only")
		return nil, false, nil
	}
	_, cs, err = o.kube.Clientset()
	if err != nil {
		if len(o.configs) > 0 && !o.explicit {
			o.streams.Infof("cloud: no cluster (%v); checking the --config files only", err)
			return nil, false, nil
		}
		return nil, false, err
	}
	if _, err := cs.Discovery().ServerVersion(); err != nil { // bounded by --timeout
		if len(o.configs) == 0 {
			return nil, false, cli.Unreachable(fmt.Errorf("cluster not reachable: %w", err))
		}
		o.streams.Infof("cloud: cluster not reachable (%v); checking the --config files only", err)
		return nil, true, nil
	}
	return cs, false, nil
}

func (o *options) run(ctx context.Context) error {
	cfgs, cfgErrs := cloud.LoadPaths(o.configs)
	for _, err := range cfgErrs {
		o.streams.Infof("cloud: %v", err)
	}
	cs, partial, err := o.client()
	if err != nil {
		return o.output.Failed(o.streams.Out, "credwatch cloud", err)
	}
	obs := cloud.Fetch(ctx, cloud.FetchOptions{Configs: cfgs, ConfigErrors: cfgErrs, Client: cs, NoLogin: o.noLogin,
		Login:  cloud.LoginOptions{Timeout: o.loginTO, Insecure: o.insecureSet, Interval: o.interval},
		Health: true, Timeout: o.kube.Timeout, Host: o.host()})
	r := cloud.Judge(obs, o.failOn.Severity)
	r.ToolVersion = cli.Build().Version
	if partial {
		r.Partial = true
		r.Errors = append(r.Errors, "cluster not reachable")
	}
	exit := ExitFor(r, o.failOn.Severity)
	outcome := exit // what the SARIF log says: the bad inputs, which stderr had line by line
	if cli.Code(exit) == cli.ExitUsage {
		outcome = cli.Usagef("bad input: %s", strings.Join(r.InputErrors, "; "))
	}
	if err := o.output.Print(o.streams.Out, r, outcome); err != nil {
		return err
	}
	if ctx.Err() != nil {
		// A login cut short by the signal reads as unreachable: the report is partial, and an
		// interrupted run is never a pass (exit 130).
		return fmt.Errorf("interrupted: the logins did not finish: %w", context.Cause(ctx))
	}
	return exit
}

// host says how Fetch finds the host's processes that read the --config files: from /proc,
// unless --no-host-processes or there are no --config files.
func (o *options) host() cloud.DiscoverOptions {
	if o.noHost || len(o.configs) == 0 {
		return cloud.DiscoverOptions{}
	}
	return cloud.DiscoverOptions{Processes: cloud.HostProcesses("/proc"), LoopWait: o.loopWait, Progress: o.streams.Infof}
}

// kubeconfigExists reports whether $KUBECONFIG or ~/.kube/config names a kubeconfig.
func kubeconfigExists() bool {
	if os.Getenv("KUBECONFIG") != "" {
		return true
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(home, ".kube", "config"))
	return err == nil
}

// ExitFor maps a report to the exit code: 1 findings at or above failOn; else 2 when a --config
// path was bad; else 3 when the cluster was read partially; else 0.
func ExitFor(r *cloud.Report, failOn catalogue.Severity) error {
	switch {
	case finding.AnyAtLeast(r.Findings, failOn):
		return cli.Silent(cli.ExitFindings)
	case r.BadInput:
		return cli.Silent(cli.ExitUsage)
	case r.Partial:
		return cli.Silent(cli.ExitUnreachable)
	}
	return nil
}
