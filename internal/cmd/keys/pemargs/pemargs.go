// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package pemargs is what keys id and keys jwks share: commands that take PEM files as their
// arguments and print one document about the keys in them.
package pemargs

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/report"
)

// Options are such a command's options.
type Options struct {
	Streams cli.Streams
	Output  *cli.OutputFlag
	// Keys are the keys of every file, in order; set by Complete.
	Keys []keys.Key
}

// Register makes cmd take one or more PEM files and registers -o with formats (none: the
// common ones). Its RunE completes the options and calls run.
func Register(cmd *cobra.Command, s cli.Streams, run func(*Options) error, formats ...report.Format) *Options {
	o := &Options{Streams: s}
	cmd.Args = cobra.MinimumNArgs(1)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(cmd.Context(), args); err != nil {
			return err
		}
		return run(o)
	}
	o.Output = cli.NewOutputFlag(cmd.Flags(), formats...)
	return o
}

// Complete parses -o, then loads the keys of files; a file that cannot be read or holds no key
// is a usage error. Cancelling ctx abandons a file that blocks (a FIFO).
func (o *Options) Complete(ctx context.Context, files []string) error {
	if err := o.Output.Complete(); err != nil {
		return err
	}
	all, err := keys.LoadPEMFiles(ctx, files...)
	if err != nil {
		return cli.Usage(err)
	}
	o.Keys = all
	return nil
}
