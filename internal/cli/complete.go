// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/credwatch/credwatch/pkg/limits"
)

// valuesAnnotation marks a flag whose values are a fixed list (-o's formats): Completions offers
// them.
const valuesAnnotation = "credwatch_values"

// FlagValues records the values a flag takes, for shell completion.
func FlagValues(fs *pflag.FlagSet, name string, values ...string) {
	_ = fs.SetAnnotation(name, valuesAnnotation, values)
}

// Values are the values FlagValues recorded for f (-o: the formats its command accepts); nil when
// the flag takes any value.
func Values(f *pflag.Flag) []string { return f.Annotations[valuesAnnotation] }

// Completions registers the dynamic shell completion of every flag in the tree under root that
// takes one of a known set of values: -o (the command's formats), --fail-on (the severities, FailOn) and
// --context (the kubeconfig's contexts). Arguments complete through each command's own
// ValidArgsFunction (explain: catalogue IDs; lab scenario: scenario names).
func Completions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			var fn cobra.CompletionFunc
			switch {
			case len(f.Annotations[valuesAnnotation]) > 0:
				fn = fixed(f.Annotations[valuesAnnotation])
			case f.Name == "context" || f.Name == "contexts":
				fn = contexts
			default:
				return
			}
			_ = c.RegisterFlagCompletionFunc(f.Name, fn)
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// CompleteFrom completes an argument from names (the ones that start with what was typed).
func CompleteFrom(names func() []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return withPrefix(names(), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

func fixed(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return withPrefix(values, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// contexts lists the contexts of the kubeconfig that --kubeconfig (or $KUBECONFIG, or
// ~/.kube/config) names; nothing when it cannot be read, or when a file is larger than
// limits.Kubeconfig (the bound every command's loading keeps; client-go reads any size whole,
// at every TAB) or not a regular file (a FIFO would hang the shell).
func contexts(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f := cmd.Flags().Lookup("kubeconfig"); f != nil && f.Value.String() != "" {
		rules.ExplicitPath = f.Value.String()
	}
	for _, p := range rules.GetLoadingPrecedence() {
		if st, err := os.Stat(p); err == nil && (!st.Mode().IsRegular() || st.Size() > limits.Kubeconfig) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	}
	raw, err := rules.Load()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := make([]string, 0, len(raw.Contexts))
	for name := range raw.Contexts {
		names = append(names, name)
	}
	slices.Sort(names)
	// --contexts takes a comma-separated list: complete its last element.
	done := ""
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		done, toComplete = toComplete[:i+1], toComplete[i+1:]
	}
	out := withPrefix(names, toComplete)
	for i := range out {
		out[i] = done + out[i]
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func withPrefix(values []string, prefix string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}
