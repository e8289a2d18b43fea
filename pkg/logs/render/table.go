// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/report"
)

// WriteTable writes the report for people: verdict, failures, context events, unknown texts,
// input problems.
func (r Report) WriteTable(w io.Writer, o report.TableOptions) error {
	oneDay := r.Summary.From.IsZero() || r.Summary.From.Truncate(24*time.Hour).Equal(r.Summary.To.Truncate(24*time.Hour))
	ts := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return clock(t, oneDay)
	}
	fmt.Fprintf(w, "Read %d of %d inputs: %s lines, %s authentication failures, %s context events, %s skipped lines.\n",
		r.Summary.InputsRead, r.Summary.Inputs, report.Thousands(int(r.Summary.Lines)), report.Thousands(r.Summary.AuthFailures),
		report.Thousands(r.Summary.ContextEvents), report.Thousands(int(r.Summary.SkippedLines)))
	if !r.Summary.From.IsZero() {
		fmt.Fprintf(w, "Time range (UTC): %s to %s\n", r.Summary.From.Format("2006-01-02 15:04:05"), r.Summary.To.Format("2006-01-02 15:04:05"))
	}
	if n := r.Summary.UnfilteredLines; n > 0 {
		fmt.Fprintf(w, "%s of these lines had no usable time (no year or zone) and were not filtered by --since.\n", report.Thousands(int(n)))
	}
	fmt.Fprintln(w)
	if len(r.Verdict) == 0 {
		fmt.Fprintln(w, "VERDICT: no authentication failures found.")
	} else {
		fmt.Fprintln(w, "VERDICT")
		for _, h := range r.Verdict {
			lines := []string{fmt.Sprintf("[%s] %s", h.Severity, h.Statement), "remedy: " + h.Remedy}
			// An evidence line is whole (pkg/logs bounds it): its end is often the one message
			// that names the cause (square/go-jose's). It wraps, as the other lines do.
			for i, ev := range h.Evidence {
				if i == 2 {
					break
				}
				lines = append(lines, fmt.Sprintf("evidence: %s:%d: %s", ev.Input, ev.LineNumber, ev.Line))
			}
			for i, l := range lines {
				first := "    "
				if i == 0 {
					first = fmt.Sprintf("%2d. ", h.Rank)
				}
				if err := o.Hang(w, first, "      ", l); err != nil {
					return err
				}
			}
		}
	}
	if len(r.Failures) > 0 {
		fmt.Fprintln(w, "\nAUTHENTICATION FAILURES")
		// Host, component and cause say whose failure it is and are never cut; the bursts are -o wide's.
		g := report.NewGrid("", report.Col{Name: "HOST"}, report.Col{Name: "COMPONENT"}, report.Col{Name: "CAUSE"},
			report.Col{Name: "COUNT"}, report.Col{Name: "FIRST"}, report.Col{Name: "LAST"}, report.Col{Name: "BURSTS", Wide: true})
		for _, f := range r.Failures {
			g.Row(f.Host, f.Component, causeLabel(f), report.Thousands(f.Count), ts(f.First), ts(f.Last), bursts(f.Bursts, oneDay))
		}
		if err := g.Write(w, o); err != nil {
			return err
		}
	}
	if len(r.Context) > 0 {
		fmt.Fprintln(w, "\nCONTEXT EVENTS")
		g := report.NewGrid("", report.Col{Name: "HOST", Flex: true}, report.Col{Name: "COMPONENT"}, report.Col{Name: "EVENT"},
			report.Col{Name: "COUNT"}, report.Col{Name: "FIRST"}, report.Col{Name: "LAST"})
		for _, c := range r.Context {
			g.Row(c.Host, c.Component, c.Cause, report.Thousands(c.Count), ts(c.First), ts(c.Last))
		}
		if err := g.Write(w, o); err != nil {
			return err
		}
	}
	if len(r.Unknown) > 0 {
		fmt.Fprintln(w, "\nUNKNOWN CREDENTIAL ERRORS (no catalogue spelling matched; NEAREST is the family its WORDS put it in)")
		// The text is all there is to read of an unknown error: it wraps on a terminal, never cut.
		g := report.NewGrid("", report.Col{Name: "HOST", Flex: true}, report.Col{Name: "COMPONENT"}, report.Col{Name: "COUNT"},
			report.Col{Name: "NEAREST"}, report.Col{Name: "WORDS"}, report.Col{Name: "TEXT", Wrap: true})
		for i, u := range r.Unknown {
			if i == 20 {
				g.Row("…", "", "", "", "", fmt.Sprintf("%d more", len(r.Unknown)-20))
				break
			}
			g.Row(u.Host, u.Component, report.Thousands(u.Count), u.Family, strings.Join(u.Words, ","), u.Text)
		}
		if err := g.Write(w, o); err != nil {
			return err
		}
	}
	var problems []string
	for _, in := range r.Inputs {
		for _, p := range in.Problems {
			problems = append(problems, fmt.Sprintf("%s: %s", in.Name, p))
		}
		if in.SkippedLines > 0 {
			problems = append(problems, fmt.Sprintf("%s: %s lines skipped (binary or too long)", in.Name, report.Thousands(int(in.SkippedLines))))
		}
	}
	if len(problems) > 0 {
		fmt.Fprintln(w, "\nINPUT PROBLEMS")
		for _, p := range problems {
			if err := o.Hang(w, "  ", "      ", p); err != nil {
				return err
			}
		}
	}
	return nil
}

func bursts(bs []logs.Burst, oneDay bool) string {
	if len(bs) == 0 {
		return "-"
	}
	parts := make([]string, 0, 3)
	for i, b := range bs {
		if i == 2 {
			parts = append(parts, fmt.Sprintf("+%d", len(bs)-2))
			break
		}
		parts = append(parts, fmt.Sprintf("%s–%s (%s, peak %s/min)", clock(b.From, oneDay), clock(b.To, oneDay), report.Thousands(b.Count), report.Thousands(b.PeakPerMinute)))
	}
	return strings.Join(parts, ", ")
}
