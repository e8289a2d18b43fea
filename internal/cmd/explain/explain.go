// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package explain implements `credwatch explain ID`: one catalogue entry, or the list of them.
package explain

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/report"
)

type options struct {
	streams cli.Streams
	output  *cli.OutputFlag
	id      string
}

// NewCommand returns `credwatch explain`.
func NewCommand(s cli.Streams) *cobra.Command {
	o := &options{streams: s}
	cmd := &cobra.Command{
		Use:   "explain [ID]",
		Short: "Explain a cause or finding ID from the catalogue (no ID: list them all)",
		Example: `  # what does signing-key-unknown mean, and what does each version log?
  credwatch explain signing-key-unknown`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: cli.CompleteFrom(catalogue.Default().IDs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args); err != nil {
				return err
			}
			return o.run()
		},
	}
	o.output = cli.NewOutputFlag(cmd.Flags())
	return cmd
}

func (o *options) complete(args []string) error {
	if len(args) == 1 {
		o.id = args[0]
	}
	return o.output.Complete()
}

func (o *options) run() error {
	c := catalogue.Default()
	if o.id == "" {
		return report.Print(o.streams.Out, o.output.Format, list{c})
	}
	e, ok := c.Get(o.id)
	if !ok {
		return cli.Usagef("explain %q: no such ID; run 'credwatch explain' for the list", o.id)
	}
	return report.Print(o.streams.Out, o.output.Format, Document{APIVersion: report.APIVersion, Kind: "CatalogueEntry", Entry: e})
}

// Document is the CatalogueEntry document `credwatch explain ID -o json` prints (docs/json.md;
// hack/schemagen writes its JSON Schema).
type Document struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	catalogue.Entry
}

func (e Document) WriteTable(w io.Writer, _ report.TableOptions) error {
	fmt.Fprintf(w, "%s  [%s, %s]\n%s\n\n", e.ID, e.Entry.Kind, e.Severity, e.Title)
	para := func(h, t string) {
		if t != "" {
			fmt.Fprintf(w, "%s:\n  %s\n\n", h, strings.TrimSpace(t))
		}
	}
	para("Meaning", e.Meaning)
	para("How it arises", e.Arises)
	para("Remedy", e.Remedy)
	para("Source", e.Source)
	if len(e.Messages) > 0 {
		fmt.Fprintln(w, "Messages:")
		tw := report.NewTabWriter(w)
		report.Row(tw, "  LINES", "TEXT")
		for _, m := range e.Messages {
			lines := "all"
			switch {
			case m.Since != "" && m.Until != "":
				lines = m.Since + "-" + m.Until
			case m.Since != "":
				lines = ">=" + m.Since
			case m.Until != "":
				lines = "<=" + m.Until
			}
			report.Row(tw, "  "+lines, m.Text)
		}
		return tw.Flush()
	}
	return nil
}

type list struct{ c *catalogue.Catalogue }

func (l list) MarshalJSON() ([]byte, error) { return jsonOf(l.c) }

func (l list) WriteTable(w io.Writer, _ report.TableOptions) error {
	tw := report.NewTabWriter(w)
	report.Row(tw, "ID", "KIND", "SEVERITY", "TITLE")
	for _, e := range l.c.Entries {
		report.Row(tw, e.ID, e.Kind, string(e.Severity), e.Title)
	}
	return tw.Flush()
}
