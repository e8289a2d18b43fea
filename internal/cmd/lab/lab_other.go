// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build !linux

package lab

import (
	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
)

// NewCommand returns `credwatch lab`, which needs Linux: the lab runs kube-apiserver, etcd and
// its nodes as Linux processes in network and mount namespaces. The other commands run anywhere.
func NewCommand(_ cli.Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "lab",
		Short: "Run a real multi-member Kubernetes control plane on this machine (Linux only)",
		RunE: func(*cobra.Command, []string) error {
			return cli.Usagef("credwatch lab runs only on Linux: it starts kube-apiserver, etcd and nodes as Linux processes")
		},
		DisableFlagParsing: true,
	}
}
