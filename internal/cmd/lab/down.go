// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build linux

package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/supervisor"
)

type downOptions struct {
	streams cli.Streams
	dir     dirFlag
}

func newDown(s cli.Streams) *cobra.Command {
	o := &downOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop every process of the lab (apiservers, controller manager, then etcd)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	o.dir.add(cmd.Flags())
	return cmd
}

func (o *downOptions) run(ctx context.Context) error {
	dir, err := o.dir.abs()
	if err != nil {
		return err
	}
	c := supervisor.NewClient(dir)
	dctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if _, err := c.Down(dctx); err == nil {
		// Wait for the supervisor to exit (its socket goes away).
		for i := 0; i < 100; i++ {
			if _, err := os.Stat(supervisor.SocketPath(dir)); err != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		fmt.Fprintf(o.streams.Out, "lab in %s is down\n", dir)
		return nil
	}
	// No supervisor: kill what state.json recorded, if anything still runs.
	killed, err := lab.KillLeftovers(dir)
	if errors.Is(err, os.ErrNotExist) {
		return cli.Usagef("no lab in %s", dir)
	}
	if err != nil {
		return err
	}
	_ = os.Remove(supervisor.SocketPath(dir))
	if len(killed) > 0 {
		fmt.Fprintf(o.streams.Out, "lab supervisor in %s was gone; killed leftover processes %s\n", dir, strings.Trim(fmt.Sprint(killed), "[]"))
	} else {
		fmt.Fprintf(o.streams.Out, "lab in %s is down\n", dir)
	}
	return nil
}
