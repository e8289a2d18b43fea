// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build linux

package lab

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/supervisor"
)

func newPartition(s cli.Streams) *cobra.Command {
	o := &memberOptions{streams: s}
	var from string
	cmd := &cobra.Command{
		Use:   "partition MEMBER --from etcd|lb|members",
		Short: "Cut a member's host off the network: from the other etcd members, from the load balancer, or from every other host",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := lab.PartitionFrom(from)
			if from == "" {
				return cli.Usagef("--from is required: etcd, lb or members")
			}
			if err := lab.ValidatePartitionFrom(f); err != nil {
				return cli.Usagef("--from: %v", err)
			}
			return o.change(cmd.Context(), func(ctx context.Context, c *supervisor.Client) (string, error) {
				return fmt.Sprintf("partitioned %s from %s", args[0], f), c.Partition(ctx, args[0], f)
			})
		},
	}
	cli.Examples(cmd, `  # the member's etcd loses its peers: its apiserver's /readyz fails on etcd
  credwatch lab partition apiserver-2 --from etcd
  credwatch lab heal apiserver-2`)
	o.dir.add(cmd.Flags())
	cmd.Flags().StringVar(&from, "from", "", "etcd (ports 2379/2380 to other hosts), lb (the machine: load balancer and credwatch), members (every other host)")
	return cmd
}

func newHeal(s cli.Streams) *cobra.Command {
	o := &memberOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "heal MEMBER",
		Short: "Remove every partition of a member",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.change(cmd.Context(), func(ctx context.Context, c *supervisor.Client) (string, error) {
				return "healed " + args[0], c.Heal(ctx, args[0])
			})
		},
	}
	o.dir.add(cmd.Flags())
	return cmd
}
