// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/report"
)

// Streams are a command's standard input, output (results only) and error (diagnostics). In
// app.Main, Out and ErrOut are redact.Writers that share Known.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// Known are the process's secrets (the kubeconfig's credentials) that Out and ErrOut take
	// out; nil: none.
	Known *redact.Known
	// SecretOut is stdout unredacted, for output that is a secret the user asked for (token mint
	// --out -); nil: Out.
	SecretOut io.Writer
}

// Secret is the writer for a secret the user asked to see on stdout: SecretOut, once what Out
// holds back is written.
func (s Streams) Secret() io.Writer {
	if s.SecretOut == nil {
		return s.Out
	}
	if f, ok := s.Out.(interface{ Flush() error }); ok {
		_ = f.Flush()
	}
	return s.SecretOut
}

// Infof writes a diagnostic line to ErrOut.
func (s Streams) Infof(format string, args ...any) {
	fmt.Fprintf(s.ErrOut, format+"\n", args...)
}

// DisplayName is "kubectl credwatch" when the binary runs as a kubectl plugin
// (kubectl-credwatch), else "credwatch".
func DisplayName(argv0 string) string {
	base := filepath.Base(argv0)
	if strings.HasPrefix(base, "kubectl-") || strings.HasPrefix(base, "kubectl_") {
		return "kubectl " + strings.NewReplacer("_", "-").Replace(strings.TrimPrefix(strings.TrimPrefix(base, "kubectl-"), "kubectl_"))
	}
	return "credwatch"
}

// OutputFlag is the -o flag of a command.
type OutputFlag struct {
	Raw     string
	Allowed []report.Format
	Format  report.Format
}

// NewOutputFlag registers -o on fs with the formats the command offers (default table).
func NewOutputFlag(fs *pflag.FlagSet, allowed ...report.Format) *OutputFlag {
	if len(allowed) == 0 {
		allowed = report.Common
	}
	o := &OutputFlag{Allowed: allowed, Raw: string(report.Table)}
	names := report.Names(allowed)
	fs.StringVarP(&o.Raw, "output", "o", o.Raw, "output format: "+strings.Join(names, "|"))
	completions := make([]string, len(names))
	for i, n := range names {
		completions[i] = strings.TrimSuffix(n, "TEMPLATE") // "jsonpath=": the template is the user's
	}
	FlagValues(fs, "output", completions...)
	return o
}

// Complete parses the flag's value.
func (o *OutputFlag) Complete() error {
	f, err := report.ParseFormat(o.Raw, o.Allowed)
	if err != nil {
		return Usage(err)
	}
	o.Format = f
	return nil
}

// Examples indents an example block the way kubectl does and names the binary as invoked.
func Examples(cmd *cobra.Command, text string) {
	cmd.Example = text
}
