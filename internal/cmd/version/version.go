// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package version implements `credwatch version`.
package version

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/report"
)

type options struct {
	streams cli.Streams
	output  *cli.OutputFlag
}

// NewCommand returns `credwatch version`.
func NewCommand(s cli.Streams) *cobra.Command {
	o := &options{streams: s}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print credwatch's version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.output.Complete(); err != nil {
				return err
			}
			return report.Print(o.streams.Out, o.output.Format, info(cli.Build()))
		},
	}
	o.output = cli.NewOutputFlag(cmd.Flags())
	return cmd
}

type info cli.BuildInfo

func (i info) WriteTable(w io.Writer, _ report.TableOptions) error {
	_, err := fmt.Fprintln(w, cli.BuildInfo(i).String())
	return err
}
