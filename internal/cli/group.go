// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// Group returns a command group: a command that only holds its children (keys, token, lab). long
// is trimmed of the blank lines around it; "" leaves the group without a long help text. Its
// arguments are checked by UsageErrors, which gives every group the unknown-subcommand check.
func Group(use, short, long string, children ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Long: strings.TrimSpace(long)}
	cmd.AddCommand(children...)
	return cmd
}
