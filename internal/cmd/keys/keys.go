// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package keys implements `credwatch keys`: key IDs, JWKS documents and key-set diffs, computed
// exactly as kube-apiserver computes them.
package keys

import (
	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/keys/diff"
	"github.com/credwatch/credwatch/internal/cmd/keys/id"
	"github.com/credwatch/credwatch/internal/cmd/keys/jwks"
)

// NewCommand returns `credwatch keys`.
func NewCommand(s cli.Streams) *cobra.Command {
	return cli.Group("keys", "Service-account signing keys: kid, JWKS, and drift between key sets", "",
		id.NewCommand(s), jwks.NewCommand(s), diff.NewCommand(s))
}
