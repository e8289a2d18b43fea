// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package token implements `credwatch token`: inspect, verify and mint service-account tokens
// offline.
package token

import (
	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/token/inspect"
	"github.com/credwatch/credwatch/internal/cmd/token/mint"
	"github.com/credwatch/credwatch/internal/cmd/token/verify"
)

// NewCommand returns `credwatch token`.
func NewCommand(s cli.Streams) *cobra.Command {
	return cli.Group("token", "Inspect, verify and mint service-account tokens offline (never prints a signature)", "",
		inspect.NewCommand(s), verify.NewCommand(s), mint.NewCommand(s))
}
