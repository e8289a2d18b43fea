// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package capi implements `credwatch lab capi`: the Cluster API lab (pkg/lab/capilab) hosted by a
// lab's supervisor. `lab capi up` starts a management lab on the release's line (capi.LineOf:
// v1.30.14 for v1.8, v1.36.3 for v1.14) when none runs, then the
// real Cluster API managers of one release, the lab infrastructure provider and a workload
// cluster whose KubeadmControlPlane makes its control plane with kubeadm on lab hosts; `lab capi
// status` shows it; `lab down` removes it with the lab.
package capi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/lab"
	labcapi "github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
	"github.com/credwatch/credwatch/pkg/lab/kubeadm"
	"github.com/credwatch/credwatch/pkg/lab/supervisor"
	"github.com/credwatch/credwatch/pkg/report"
)

// StartLab starts a lab with o and returns once it is ready (`lab up`'s work).
type StartLab func(ctx context.Context, o lab.Options) error

// NewCommand returns `credwatch lab capi`; defaultDir is the lab directory without --dir.
func NewCommand(s cli.Streams, defaultDir string, start StartLab) *cobra.Command {
	cmd := cli.Group("capi", "Run the real Cluster API controllers on the lab: a workload cluster made by kubeadm and KubeadmControlPlane", `
'lab capi up' brings up a management lab (one member on the release's line: v1.30.14 for v1.8,
v1.36.3 for v1.14) unless one runs in --dir, Cluster API's core, kubeadm bootstrap and
KubeadmControlPlane managers of one release (v1.8.1 removes the old machine's etcd member before the
drain, v1.8.4 after it, v1.14.2 after it too, in v1beta2, and no longer regenerates <cluster>-sa), the lab
infrastructure provider (LabCluster: a load balancer with a cloud-like health check; LabMachine: a
lab host where the bootstrap data runs kubeadm) and a workload cluster. It returns when the control
plane's machines are Running. 'lab down' removes everything. Binaries: make capi-binaries.`,
		newUp(s, defaultDir, start), newStatus(s, defaultDir))
	return cmd
}

type upOptions struct {
	streams cli.Streams
	dir     string
	cfg     Config
	wait    time.Duration
	output  *cli.OutputFlag
	start   StartLab
	// clusterAlias is --cluster, for one release the deprecated spelling of --capi-cluster.
	clusterAlias string
}

func newUp(s cli.Streams, defaultDir string, start StartLab) *cobra.Command {
	o := &upOptions{streams: s, start: start}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the Cluster API lab and wait for the workload cluster's control plane",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(cmd.Flags()); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	cli.Examples(cmd, `  credwatch lab capi up --capi v1.8.1 --lb-check tls --deregistration on-machine-delete
  export KUBECONFIG=$(credwatch lab capi status -o json | jq -r .workloadKubeconfig)
  credwatch lab down`)
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", defaultDir, "lab state directory")
	f.StringVar(&o.cfg.CAPI, "capi", labcapi.V181, "Cluster API release: "+strings.Join(labcapi.Versions(), " or "))
	f.StringVar(&o.cfg.Cluster, "capi-cluster", "w1", "name of the workload cluster (its Cluster API Cluster)")
	f.StringVar(&o.clusterAlias, "cluster", "", "deprecated: --capi-cluster")
	cli.Deprecate(f, s.ErrOut, "cluster", "use --capi-cluster (--cluster will be kubectl's kubeconfig cluster)")
	f.IntVar(&o.cfg.Replicas, "replicas", 1, "control-plane machines (1 or 3)")
	var checks []string
	for _, c := range lb.HealthChecks() {
		checks = append(checks, string(c))
	}
	f.StringVar(&o.cfg.HealthCheck, "lb-check", string(lb.CheckTCP), "the LabCluster balancer's health check: "+strings.Join(checks, ", "))
	f.StringVar(&o.cfg.Deregistration, "deregistration", string(infra.OnMachineDelete),
		"when a machine leaves the balancer: "+string(infra.OnMachineDelete)+" (CAPA before v2.4) or "+string(infra.OnDrain))
	f.DurationVar(&o.wait, "wait", 15*time.Minute, "how long the control plane may take")
	o.output = cli.NewOutputFlag(f, report.Table, report.JSON, report.YAML)
	return cmd
}

// Complete makes --dir absolute, takes the deprecated --cluster as --capi-cluster and reads -o.
func (o *upOptions) Complete(fs *pflag.FlagSet) error {
	if o.clusterAlias != "" {
		if fs.Changed("capi-cluster") && o.cfg.Cluster != o.clusterAlias {
			return cli.Conflicting("--capi-cluster "+o.cfg.Cluster, "--cluster "+o.clusterAlias, "--capi-cluster")
		}
		o.cfg.Cluster = o.clusterAlias
	}
	abs, err := filepath.Abs(o.dir)
	if err != nil || o.dir == "" {
		return cli.Usagef("--dir %q: want a directory", o.dir)
	}
	o.dir = abs
	return o.output.Complete()
}

// Validate checks the flags and that the binaries are built.
func (o *upOptions) Validate() error {
	if err := o.cfg.Validate(); err != nil {
		return cli.Usage(err)
	}
	if o.wait <= 0 {
		return cli.Usagef("--wait %s: want a positive duration", o.wait)
	}
	bin := lab.DefaultBinDir()
	if _, err := labcapi.Find(bin, o.cfg.CAPI); err != nil {
		return cli.Usage(err)
	}
	line := labcapi.LineOf(o.cfg.CAPI)
	if _, err := kubeadm.FindBinaries(bin, line.Kubernetes); err != nil {
		return cli.Usage(err)
	}
	for _, b := range []struct{ version, name string }{{line.Kubernetes, "kube-apiserver"}, {line.Kubelet, "kubelet"}} {
		if _, err := lab.Binary(bin, b.version, b.name); err != nil {
			return cli.Usage(err)
		}
	}
	return nil
}

// Run starts the management lab if needed, posts the service and follows it until the control
// plane is up.
func (o *upOptions) Run(ctx context.Context) error {
	c := supervisor.NewClient(o.dir)
	st, err := c.Status(ctx, false)
	k8s := labcapi.LineOf(o.cfg.CAPI).Kubernetes
	if err != nil || st.Phase == supervisor.PhaseDown {
		o.streams.Infof("starting a management lab (1 member, %s) in %s", k8s, o.dir)
		if err := o.start(ctx, lab.Options{Dir: o.dir, Members: 1, Version: k8s, Network: lab.NetworkHosts,
			BinDir: lab.DefaultBinDir(), Wait: 2 * time.Minute}); err != nil {
			return err
		}
	} else if st.Lab.Version != "" && st.Lab.Version != k8s {
		return cli.Usagef("the lab in %s runs %s; Cluster API %s needs a %s management cluster (credwatch lab down --dir %s)",
			o.dir, st.Lab.Version, o.cfg.CAPI, k8s, o.dir)
	}
	if err := c.StartService(ctx, ServiceName, o.cfg); err != nil {
		return fmt.Errorf("start the Cluster API lab: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, o.wait)
	defer cancel()
	seen := 0
	for {
		var lines []string
		if err := c.Do(ctx, http.MethodGet, servicePath("log"), nil, &lines); err == nil {
			for ; seen < len(lines); seen++ {
				o.streams.Infof("%s", lines[seen])
			}
		}
		var s Status
		if err := c.Do(ctx, http.MethodGet, servicePath("status"), nil, &s); err == nil {
			switch s.Phase {
			case supervisor.PhaseReady:
				return report.Print(o.streams.Out, o.output.Format, s)
			case supervisor.PhaseFailed:
				return fmt.Errorf("lab capi up: %s", s.Error)
			}
		}
		select {
		case <-ctx.Done():
			return cli.Unreachable(fmt.Errorf("lab capi up: the control plane was not up within --wait %s (credwatch lab capi status --dir %s)", o.wait, o.dir))
		case <-time.After(2 * time.Second):
		}
	}
}

func servicePath(p string) string { return "/v1/services/" + ServiceName + "/" + p }

type statusOptions struct {
	streams cli.Streams
	dir     string
	output  *cli.OutputFlag
}

func newStatus(s cli.Streams, defaultDir string) *cobra.Command {
	o := &statusOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the Cluster API lab: its control plane's machines and the provider's timeline",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.output.Complete(); err != nil {
				return err
			}
			var st Status
			if err := supervisor.NewClient(o.dir).Do(cmd.Context(), http.MethodGet, servicePath("status"), nil, &st); err != nil {
				return cli.Unreachable(fmt.Errorf("%w (is the Cluster API lab up? 'credwatch lab capi up --dir %s')", err, o.dir))
			}
			return report.Print(o.streams.Out, o.output.Format, st)
		},
	}
	cmd.Flags().StringVar(&o.dir, "dir", defaultDir, "lab state directory")
	o.output = cli.NewOutputFlag(cmd.Flags(), report.Table, report.JSON, report.YAML)
	return cmd
}

// WriteTable prints the status.
func (s Status) WriteTable(w io.Writer, _ report.TableOptions) error {
	fmt.Fprintf(w, "Cluster API %s lab: workload cluster %s, %s\n", s.CAPI, s.Cluster, s.Phase)
	if s.Error != "" {
		fmt.Fprintf(w, "Error: %s\n", s.Error)
	}
	if s.Kubeconfig != "" {
		fmt.Fprintf(w, "export KUBECONFIG=%s\n", s.Kubeconfig)
	}
	if cp := s.ControlPlane; cp != nil {
		tw := report.NewTabWriter(w)
		report.Row(tw, "MACHINE", "PHASE", "NODE", "PROVIDER ID")
		for _, m := range cp.Machines {
			phase := m.Phase
			if m.Deleting {
				phase += " (deleting)"
			}
			report.Row(tw, m.Name, phase, m.Node, m.ProviderID)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
