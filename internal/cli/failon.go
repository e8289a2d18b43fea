package cli

import (
	"github.com/spf13/pflag"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// FailOn is the --fail-on flag of check, cloud and watch: the severity at or above which a
// finding makes the command exit 1 (default error). Its completion offers the severities.
type FailOn struct{ raw string }

// Register adds --fail-on to fs with the command's own usage line.
func (f *FailOn) Register(fs *pflag.FlagSet, usage string) {
	fs.StringVar(&f.raw, "fail-on", string(catalogue.Error), usage)
	FlagValues(fs, "fail-on", severities()...)
}

// Severity parses the flag; a value that is not a severity is a usage error.
func (f *FailOn) Severity() (catalogue.Severity, error) {
	sev, err := catalogue.ParseSeverity(f.raw)
	if err != nil {
		return "", Usagef("--fail-on: %w", err)
	}
	return sev, nil
}

func severities() []string {
	return []string{string(catalogue.Info), string(catalogue.Warning), string(catalogue.Error), string(catalogue.Critical)}
}
