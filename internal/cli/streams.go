package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/credwatch/credwatch/pkg/report"
)

// Streams are a command's standard input, output (results only) and error (diagnostics).
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
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
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	fs.StringVarP(&o.Raw, "output", "o", o.Raw, "output format: "+strings.Join(names, "|"))
	FlagValues(fs, "output", names...)
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
