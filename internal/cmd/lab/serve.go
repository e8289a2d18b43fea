// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build linux

package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/supervisor"
)

type serveOptions struct {
	streams cli.Streams
	dir     dirFlag
	config  string
}

// newServe returns the hidden `lab serve`: the supervisor `lab up` starts detached.
func newServe(s cli.Streams) *cobra.Command {
	o := &serveOptions{streams: s}
	cmd := &cobra.Command{
		Use:    "serve",
		Short:  "Run a lab in the foreground and answer the other lab commands (started by lab up)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE:   func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	o.dir.add(cmd.Flags())
	cmd.Flags().StringVar(&o.config, "config", "", "lab options (JSON file written by lab up)")
	return cmd
}

func (o *serveOptions) run(ctx context.Context) error {
	dir, err := o.dir.abs()
	if err != nil {
		return err
	}
	var opts lab.Options
	if o.config != "" {
		data, err := os.ReadFile(o.config)
		if err != nil {
			return cli.Usagef("--config: %v", err)
		}
		if err := json.Unmarshal(data, &opts); err != nil {
			return cli.Usagef("--config %s: %v", o.config, err)
		}
	}
	opts.Dir = dir
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	srv := &supervisor.Server{Options: opts, Services: services(), Log: o.streams.ErrOut}
	if err := srv.Run(ctx); err != nil {
		return fmt.Errorf("lab supervisor: %w", err)
	}
	return nil
}
