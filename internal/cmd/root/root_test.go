// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package root

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/limits"
)

// TestNoCobraFlagRules: cobra checks required flags and flag groups after every hook that could
// type its errors, so they would come back untyped (exit 4, not 2). Commands check such rules in
// their Validate step instead.
func TestNoCobraFlagRules(t *testing.T) {
	rules := []string{cobra.BashCompOneRequiredFlag, "cobra_annotation_required_if_others_set",
		"cobra_annotation_one_required", "cobra_annotation_mutually_exclusive"}
	var b bytes.Buffer
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				for _, r := range rules {
					if _, ok := f.Annotations[r]; ok {
						t.Errorf("%s --%s: %s; check it in the command's Validate and return cli.Usage", c.CommandPath(), f.Name, r)
					}
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCommand("credwatch", cli.Streams{In: strings.NewReader(""), Out: &b, ErrOut: &b}))
}

// TestCompletion: cobra's completion command is offered for every shell.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		var out, errOut bytes.Buffer
		cmd := NewCommand("credwatch", cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		cmd.SetArgs([]string{"completion", shell})
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		if err := cmd.Execute(); err != nil || !strings.Contains(out.String(), "credwatch") {
			t.Errorf("completion %s: err %v, %d bytes", shell, err, out.Len())
		}
	}
}

// TestCompletionUsage: arguments cobra's completion command does not take are usage errors.
func TestCompletionUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"completion", "bash"}, cli.ExitOK},
		{[]string{"completion", "bash", "extra"}, cli.ExitUsage},
		{[]string{"completion", "zsh", "a", "b"}, cli.ExitUsage},
		{[]string{"completion", "tcsh"}, cli.ExitUsage},
	} {
		var out, errOut bytes.Buffer
		cmd := NewCommand("credwatch", cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		cmd.SetArgs(tt.args)
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		if got := cli.Code(cmd.Execute()); got != tt.code {
			t.Errorf("%q: exit %d, want %d", tt.args, got, tt.code)
		}
	}
}

// TestPluginName: invoked as a kubectl plugin, the usage line names the plugin once and every
// example starts with "kubectl credwatch", so that it can be pasted as it is.
func TestPluginName(t *testing.T) {
	var b bytes.Buffer
	root := NewCommand("kubectl credwatch", cli.Streams{In: strings.NewReader(""), Out: &b, ErrOut: &b})
	if got := root.UseLine(); !strings.HasPrefix(got, "kubectl credwatch") || strings.Contains(got, "credwatch credwatch") {
		t.Errorf("usage line %q, want it to start with the plugin name, once", got)
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, line := range strings.Split(c.Example, "\n") {
			l := strings.TrimSpace(line)
			if strings.HasPrefix(l, "credwatch ") {
				t.Errorf("%s: example %q does not name the plugin", c.CommandPath(), l)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	check, _, err := root.Find([]string{"check"})
	if err != nil || !strings.Contains(check.Example, "  kubectl credwatch check ") {
		t.Errorf("check's examples do not start with the plugin name: %q (%v)", check.Example, err)
	}
	// -n/--namespace where a namespace is read (check's and preflight's --capi-cluster), nowhere else.
	for _, path := range [][]string{{"check"}, {"preflight"}, {"watch"}, {"logs"}, {"cloud"}} {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		f := c.Flags().Lookup("namespace")
		if reads := c.Flags().Lookup("capi-cluster") != nil; (f != nil) != reads || f != nil && f.Shorthand != "n" {
			t.Errorf("%s: -n/--namespace %v, --capi-cluster %v: want -n exactly where a namespace is read", path[0], f, reads)
		}
	}
}

// TestDynamicCompletion asks cobra's __complete, as the shell scripts do, for IDs, -o values,
// severities, contexts and scenario names.
func TestDynamicCompletion(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts:
- {name: prod-east, context: {cluster: c, user: u}}
- {name: prod-west, context: {cluster: c, user: u}}
- {name: lab, context: {cluster: c, user: u}}
current-context: lab
`), 0o600); err != nil {
		t.Fatal(err)
	}
	// The same contexts past limits.Kubeconfig (a comment pads it): completion loads nothing.
	large := filepath.Join(t.TempDir(), "large")
	b, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	b = append(append(b, "# "...), bytes.Repeat([]byte{'x'}, limits.Kubeconfig)...)
	if err := os.WriteFile(large, append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string // the candidates, in order
	}{
		{"explain IDs", []string{"explain", "signing-key-u"}, []string{"signing-key-unknown"}},
		{"check -o", []string{"check", "-o", ""}, []string{"table", "wide", "json", "yaml", "sarif", "junit", "jsonpath="}},
		{"explain -o", []string{"explain", "-o", "y"}, []string{"yaml"}},
		{"--fail-on", []string{"check", "--fail-on", "w"}, []string{"warning"}},
		{"--fail-on none", []string{"preflight", "--fail-on", "n"}, []string{"none"}},
		{"logs --fail-on", []string{"logs", "--fail-on", "c"}, []string{"critical"}},
		{"--context", []string{"check", "--kubeconfig", kubeconfig, "--context", "prod"}, []string{"prod-east", "prod-west"}},
		{"--context, kubeconfig too large", []string{"check", "--kubeconfig", large, "--context", "prod"}, nil},
		{"--context, kubeconfig a directory", []string{"check", "--kubeconfig", t.TempDir(), "--context", "prod"}, nil},
		{"--contexts list", []string{"check", "--kubeconfig", kubeconfig, "--contexts", "lab,prod-w"}, []string{"lab,prod-west"}},
		{"scenario names", []string{"lab", "scenario", "key-dr"}, []string{"key-drift"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := NewCommand("credwatch", cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			cmd.SetArgs(append([]string{cobra.ShellCompRequestCmd}, tt.args...))
			cmd.SetOut(&out)
			cmd.SetErr(&errOut)
			if err := cmd.Execute(); err != nil {
				t.Fatalf("__complete: %v (%s)", err, errOut.String())
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if l != "" && !strings.HasPrefix(l, ":") {
					got = append(got, strings.SplitN(l, "\t", 2)[0])
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("candidates %q, want %q", got, tt.want)
			}
		})
	}
}

// run executes the root command named name with args and returns its stdout, stderr and exit code.
func run(t *testing.T, name string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCommand(name, cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	code := cli.Code(cmd.Execute())
	return out.String(), errOut.String(), code
}

// TestVersionFlag: --version prints what `credwatch version` prints, also as a kubectl plugin,
// and -v is not taken for it.
func TestVersionFlag(t *testing.T) {
	want, _, code := run(t, "credwatch", "version")
	if code != cli.ExitOK || !strings.HasPrefix(want, "credwatch ") {
		t.Fatalf("version: exit %d, %q", code, want)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
		code int
	}{
		{"credwatch", []string{"--version"}, want, cli.ExitOK},
		{"kubectl credwatch", []string{"--version"}, want, cli.ExitOK},
		{"credwatch", []string{"-v"}, "", cli.ExitUsage},
	} {
		t.Run(tt.name+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, code := run(t, tt.name, tt.args...)
			if code != tt.code || out != tt.want {
				t.Errorf("exit %d, stdout %q (stderr %q); want exit %d, stdout %q", code, out, errOut, tt.code, tt.want)
			}
		})
	}
}

// TestHelpGroups: the root's help lists the user commands under one heading and the lab, which
// needs root, under its own, after them.
func TestHelpGroups(t *testing.T) {
	out, _, code := run(t, "credwatch", "--help")
	if code != cli.ExitOK {
		t.Fatalf("--help: exit %d", code)
	}
	user, labGroup, ok := strings.Cut(out, "\nTest lab (needs root and Linux; docs/lab.md):\n")
	if !ok {
		t.Fatalf("no lab heading in:\n%s", out)
	}
	_, user, _ = strings.Cut(user, "\nCommands:\n")
	for _, tt := range []struct {
		section, text, name string
		want                bool
	}{
		{"commands", user, "check", true},
		{"commands", user, "watch", true},
		{"commands", user, "completion", true},
		{"commands", user, "help", true},
		{"commands", user, "lab", false},
		{"lab", labGroup, "lab", true},
		{"lab", labGroup, "check", false},
	} {
		if got := strings.Contains(tt.text, "\n  "+tt.name+" ") || strings.HasPrefix(tt.text, "  "+tt.name+" "); got != tt.want {
			t.Errorf("%s section lists %s: %v, want %v\n%s", tt.section, tt.name, got, tt.want, out)
		}
	}
	if strings.Contains(out, "Additional Commands:") {
		t.Errorf("a command is in no group:\n%s", out)
	}
}
