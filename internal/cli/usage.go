// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// UsageErrors makes every error cobra and pflag raise for cmd and its subcommands a usage error
// (exit 2) by type, where it is raised: flag parse errors through the flag error function,
// argument errors by wrapping each command's Args validator, and unknown subcommands of a
// command group by giving the group a validator of its own. Call it once the tree is complete.
//
// Required flags and flag groups (MarkFlagRequired, MarkFlagsMutuallyExclusive...) would fail
// after these hooks with untyped errors; credwatch checks such rules in Validate instead
// (TestNoCobraFlagRules keeps it so).
func UsageErrors(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageOf(c, err) })
	usageArgs(cmd)
}

func usageArgs(c *cobra.Command) {
	switch {
	case c.HasSubCommands() && !c.Runnable():
		// A group: an argument that names no subcommand is an unknown command. Cobra checks this
		// only for the root, untyped, and shows help (exit 0) below it, hiding the mistake.
		c.Args = unknownSubcommand
		c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	case c.HasSubCommands() && !c.HasParent() && c.Args == nil:
		// A root that runs (for --version) takes no argument but a subcommand's name either.
		c.Args = unknownSubcommand
	case c.Args != nil:
		validate := c.Args
		c.Args = func(c *cobra.Command, args []string) error {
			if err := validate(c, args); err != nil {
				return usageOf(c, err)
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

func unknownSubcommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // cobra's default, which only its own root check applies
	}
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return usageOf(c, errors.New(msg))
}

func usageOf(c *cobra.Command, err error) error {
	return Usage(fmt.Errorf("%w (see '%s --help')", err, c.CommandPath()))
}
