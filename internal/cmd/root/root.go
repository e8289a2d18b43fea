// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package root assembles credwatch's command tree from the one list of top-level commands.
package root

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/check"
	"github.com/credwatch/credwatch/internal/cmd/cloud"
	"github.com/credwatch/credwatch/internal/cmd/explain"
	"github.com/credwatch/credwatch/internal/cmd/keys"
	"github.com/credwatch/credwatch/internal/cmd/lab"
	"github.com/credwatch/credwatch/internal/cmd/logs"
	"github.com/credwatch/credwatch/internal/cmd/preflight"
	"github.com/credwatch/credwatch/internal/cmd/token"
	"github.com/credwatch/credwatch/internal/cmd/version"
	"github.com/credwatch/credwatch/internal/cmd/watch"
)

// The help groups of the top-level commands: what users run, and the test lab, which needs root
// (and Linux) and is listed apart so that nobody mistakes it for a step of a diagnosis.
const (
	groupUser = "user"
	groupLab  = "lab"
)

// commands is the one list of top-level commands, by help group.
func commands(s cli.Streams) map[string][]*cobra.Command {
	return map[string][]*cobra.Command{groupLab: {lab.NewCommand(s)}, groupUser: {
		check.NewCommand(s),
		cloud.NewCommand(s),
		explain.NewCommand(s),
		keys.NewCommand(s),
		token.NewCommand(s),
		logs.NewCommand(s),
		preflight.NewCommand(s),
		version.NewCommand(s),
		watch.NewCommand(s),
	}}
}

// NewCommand returns the root command; name is "credwatch" or "kubectl credwatch".
func NewCommand(name string, s cli.Streams) *cobra.Command {
	cmd := &cobra.Command{
		// Use is the bare name: cobra shows the display name in its place, and a two-word Use
		// ("kubectl credwatch") would read "kubectl credwatch credwatch" in the usage line.
		Use:   "credwatch",
		Short: "Find, explain and watch the credential failures that take Kubernetes control planes down",
		Long: strings.TrimSpace(`
credwatch finds, explains and watches service-account token and cloud-credential failures in a
Kubernetes control plane: which API server rejects which tokens and why, what a given token is
and what each kube-apiserver version would say about it, and which cloud credentials were rotated
under a running control plane.

Exit codes: 0 ok, 1 findings at or above --fail-on (or a rejected token), 2 bad input or usage,
3 the cluster could not be reached or a check was partial, 4 internal or unexpected error,
124 deadline (reserved), 130 interrupted (docs/exit-codes.md).`),
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: name},
	}
	cmd.AddGroup(&cobra.Group{ID: groupUser, Title: "Commands:"},
		&cobra.Group{ID: groupLab, Title: "Test lab (needs root and Linux; docs/lab.md):"})
	byGroup := commands(s)
	for _, group := range []string{groupUser, groupLab} {
		for _, c := range byGroup[group] {
			c.GroupID = group
			cmd.AddCommand(c) // cobra sorts them by name
		}
	}
	cmd.SetHelpCommandGroupID(groupUser)
	cmd.SetCompletionCommandGroupID(groupUser)
	// --version prints what `credwatch version` prints; no -v, which kubectl users read as verbosity.
	// Not cobra's Version field: its version template would link text/template's executor, which
	// keeps ~6 MB of unused methods in the binary (hack/binsize.sh).
	version := cmd.Flags().Bool("version", false, "print credwatch's version, commit and Go version (as credwatch version)")
	cmd.RunE = func(c *cobra.Command, _ []string) error {
		if !*version {
			return c.Help() // as cobra does for a root without a run function
		}
		_, err := fmt.Fprintln(s.Out, cli.Build().String())
		return err
	}
	cli.Completions(cmd)
	// cobra adds its completion command only when it executes, after UsageErrors would have
	// typed its argument errors: add it now, so that `completion bash extra` is usage (exit 2).
	// It keeps the writer it sees when added, so the streams are set first.
	cmd.SetOut(s.Out)
	cmd.SetErr(s.ErrOut)
	cmd.InitDefaultCompletionCmd()
	if name != "credwatch" {
		renameExamples(cmd, name)
	}
	cli.UsageErrors(cmd)
	return cmd
}

// exampleCommand is "credwatch " where an example line starts a command (after its indent, or
// after a pipe or "$(").
var exampleCommand = regexp.MustCompile(`(?m)(^\s*|\| |\$\()credwatch `)

// renameExamples writes every example of the tree with the name credwatch was invoked by
// ("kubectl credwatch check ..." in plugin mode), so that they can be pasted as they are.
func renameExamples(c *cobra.Command, name string) {
	c.Example = exampleCommand.ReplaceAllString(c.Example, "${1}"+name+" ")
	for _, sub := range c.Commands() {
		renameExamples(sub, name)
	}
}
