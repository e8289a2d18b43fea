// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build linux

package lab

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/podtenant"
	"github.com/credwatch/credwatch/pkg/report"
)

// tenantPodsOptions drive `lab tenant-pods`: the tenant Deployment on the lab's nodes.
type tenantPodsOptions struct {
	streams  cli.Streams
	dir      dirFlag
	replicas int32
	since    time.Duration
	output   *cli.OutputFlag
}

func newTenantPods(s cli.Streams) *cobra.Command {
	o := &tenantPodsOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "tenant-pods deploy|tally",
		Short: "Tenants as real pods on the lab's nodes: deploy them, or tally the calls they made through the kubernetes Service",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.output.Complete(); err != nil {
				return err
			}
			cs, err := o.clientset()
			if err != nil {
				return err
			}
			switch args[0] {
			case "deploy":
				return o.deploy(cmd.Context(), cs)
			case "tally":
				return o.tally(cmd.Context(), cs)
			}
			return cli.Usagef("tenant-pods %q: want deploy or tally", args[0])
		},
	}
	cli.Examples(cmd, `  credwatch lab up --members 3 --nodes 2
  credwatch lab tenant-pods deploy --replicas 2
  credwatch lab tenant-pods tally --since 30s`)
	o.dir.add(cmd.Flags())
	cmd.Flags().Int32Var(&o.replicas, "replicas", 2, "tenant pods (spread over the nodes)")
	cmd.Flags().DurationVar(&o.since, "since", time.Minute, "tally: count the calls answered in this last window")
	o.output = cli.NewOutputFlag(cmd.Flags(), report.Table, report.JSON, report.YAML)
	return cmd
}

func (o *tenantPodsOptions) clientset() (kubernetes.Interface, error) {
	dir, err := o.dir.abs()
	if err != nil {
		return nil, err
	}
	st, err := lab.ReadState(dir)
	if err != nil {
		return nil, cli.Usagef("no lab in %s: %v", dir, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", st.AdminKubeconfig)
	if err != nil {
		return nil, fmt.Errorf("lab admin kubeconfig %s: %w", st.AdminKubeconfig, err)
	}
	return kubernetes.NewForConfig(cfg)
}

func (o *tenantPodsOptions) deploy(ctx context.Context, cs kubernetes.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	pods, err := podtenant.Deploy(ctx, cs, podtenant.Options{Replicas: o.replicas})
	if err != nil {
		return cli.Unreachable(err)
	}
	for _, p := range pods {
		fmt.Fprintf(o.streams.Out, "%s/%s running on %s\n", p.Namespace, p.Name, p.Spec.NodeName)
	}
	return nil
}

func (o *tenantPodsOptions) tally(ctx context.Context, cs kubernetes.Interface) error {
	t, err := podtenant.ReadTally(ctx, cs, podtenant.Options{}, time.Now().Add(-o.since))
	if err != nil {
		return cli.Unreachable(err)
	}
	if o.output.Format != report.Table && o.output.Format != report.Wide {
		return report.Print(o.streams.Out, o.output.Format, t)
	}
	tw := tabwriter.NewWriter(o.streams.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "SERVED BY\tCALLS\t401\n")
	for _, m := range t.Members {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", m.Member, m.Requests, m.Unauthorized)
	}
	_ = tw.Flush()
	fmt.Fprintf(o.streams.Out, "%d calls from %d pods in the last %s through the kubernetes Service: %d answered 401 %v, %d got no answer\n",
		t.Requests, t.Pods, o.since, t.Unauthorized, t.Reasons, t.NoResponse)
	return nil
}
