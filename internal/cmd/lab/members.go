// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build linux

package lab

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/supervisor"
)

type memberOptions struct {
	streams cli.Streams
	dir     dirFlag
	member  memberFlags
	remove  lab.RemoveOptions
}

func newAddMember(s cli.Streams) *cobra.Command {
	o := &memberOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "add-member",
		Short: "Join a new etcd member and a new kube-apiserver on it, then add it to the load balancer",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mo, err := o.member.options()
			if err != nil {
				return err
			}
			return o.change(cmd.Context(), func(ctx context.Context, c *supervisor.Client) (string, error) {
				m, err := c.AddMember(ctx, mo)
				return fmt.Sprintf("added %s (%s) on %s, etcd %s", m.Name, m.Version, m.Address, m.EtcdName), err
			})
		},
	}
	cli.Examples(cmd, `  credwatch lab add-member --sa-key new
  credwatch lab add-member --issuer https://new.example --issuer https://kubernetes.default.svc.cluster.local`)
	o.dir.add(cmd.Flags())
	o.member.add(cmd.Flags())
	return cmd
}

func newRemoveMember(s cli.Streams) *cobra.Command {
	o := &memberOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "remove-member NAME",
		Short: "Remove a kube-apiserver and its etcd member (optionally etcd first, keeping the apiserver)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.change(cmd.Context(), func(ctx context.Context, c *supervisor.Client) (string, error) {
				return "removed " + args[0], c.RemoveMember(ctx, args[0], o.remove)
			})
		},
	}
	cli.Examples(cmd, `  credwatch lab remove-member apiserver-1
  # the KubeadmControlPlane scale-down window: etcd member gone, apiserver still in the load balancer
  credwatch lab remove-member apiserver-1 --etcd-first --keep-apiserver`)
	o.dir.add(cmd.Flags())
	cmd.Flags().BoolVar(&o.remove.EtcdFirst, "etcd-first", false, "remove the member's etcd member before stopping the apiserver")
	cmd.Flags().BoolVar(&o.remove.KeepAPIServer, "keep-apiserver", false, "remove only the etcd member; leave the apiserver running and in the load balancer")
	return cmd
}

func newRoll(s cli.Streams) *cobra.Command {
	o := &memberOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "roll",
		Short: "Replace every member one by one: add a new one, remove the old etcd member, remove the old apiserver",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mo, err := o.member.options()
			if err != nil {
				return err
			}
			return o.withProgress(cmd.Context(), func(ctx context.Context, c *supervisor.Client, s cli.Streams) error {
				steps, err := c.Roll(ctx, mo)
				for _, st := range steps {
					fmt.Fprintf(s.Out, "%s replaced by %s\n", st.Removed, st.Added)
				}
				return err
			})
		},
	}
	cli.Examples(cmd, `  credwatch lab roll
  credwatch lab roll --version v1.36.3 --sa-key new`)
	o.dir.add(cmd.Flags())
	o.member.add(cmd.Flags())
	return cmd
}

// change runs op against the supervisor with its progress echoed (withProgress) and, when op
// succeeds, prints the line op returns: what it did.
func (o *memberOptions) change(ctx context.Context, op func(context.Context, *supervisor.Client) (string, error)) error {
	return o.withProgress(ctx, func(ctx context.Context, c *supervisor.Client, s cli.Streams) error {
		did, err := op(ctx, c)
		if err == nil {
			fmt.Fprintln(s.Out, did)
		}
		return err
	})
}

// withProgress runs op against the supervisor while echoing the supervisor's progress lines.
func (o *memberOptions) withProgress(ctx context.Context, op func(context.Context, *supervisor.Client, cli.Streams) error) error {
	dir, err := o.dir.abs()
	if err != nil {
		return err
	}
	c := supervisor.NewClient(dir)
	st, err := c.Status(ctx, false)
	if err != nil {
		return cli.Unreachable(fmt.Errorf("no running lab in %s: %w", dir, err))
	}
	seen := len(st.Log)
	ctx, cancel := context.WithTimeout(ctx, longOp)
	defer cancel()
	// op's results are written to stdout after the last progress line.
	var out bytes.Buffer
	results := o.streams
	results.Out = &out
	done := make(chan error, 1)
	go func() { done <- op(ctx, c, results) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			o.echo(ctx, c, &seen)
			_, _ = o.streams.Out.Write(out.Bytes())
			if err != nil {
				return supervisorErr(err)
			}
			return nil
		case <-tick.C:
			o.echo(ctx, c, &seen)
		}
	}
}

func (o *memberOptions) echo(ctx context.Context, c *supervisor.Client, seen *int) {
	st, err := c.Status(ctx, false)
	if err != nil {
		return
	}
	if *seen > len(st.Log) {
		*seen = 0
	}
	for ; *seen < len(st.Log); *seen++ {
		o.streams.Infof("%s", st.Log[*seen])
	}
}
