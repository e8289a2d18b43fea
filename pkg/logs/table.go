package logs

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/report"
)

// WriteTable writes the report for people: verdict, failures, context events, unknown texts,
// input problems.
func (r *Report) WriteTable(w io.Writer, _ report.TableOptions) error {
	oneDay := r.Summary.From.IsZero() || r.Summary.From.Truncate(24*time.Hour).Equal(r.Summary.To.Truncate(24*time.Hour))
	ts := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return clock(t, oneDay)
	}
	fmt.Fprintf(w, "Read %d of %d inputs: %s lines, %s authentication failures, %s context events, %s skipped lines.\n",
		r.Summary.InputsRead, r.Summary.Inputs, thousands(int(r.Summary.Lines)), thousands(r.Summary.AuthFailures),
		thousands(r.Summary.ContextEvents), thousands(int(r.Summary.SkippedLines)))
	if !r.Summary.From.IsZero() {
		fmt.Fprintf(w, "Time range (UTC): %s to %s\n", r.Summary.From.Format("2006-01-02 15:04:05"), r.Summary.To.Format("2006-01-02 15:04:05"))
	}
	if n := r.Summary.UnfilteredLines; n > 0 {
		fmt.Fprintf(w, "%s of these lines had no usable time (no year or zone) and were not filtered by --since.\n", thousands(int(n)))
	}
	fmt.Fprintln(w)
	if len(r.Verdict) == 0 {
		fmt.Fprintln(w, "VERDICT: no authentication failures found.")
	} else {
		fmt.Fprintln(w, "VERDICT")
		for _, h := range r.Verdict {
			fmt.Fprintf(w, "%2d. [%s] %s\n", h.Rank, h.Severity, h.Statement)
			fmt.Fprintf(w, "    remedy: %s\n", h.Remedy)
			for i, ev := range h.Evidence {
				if i == 2 {
					break
				}
				fmt.Fprintf(w, "    evidence: %s:%d: %s\n", ev.Input, ev.LineNumber, clip(ev.Line, 200))
			}
		}
	}
	if len(r.Failures) > 0 {
		fmt.Fprintln(w, "\nAUTHENTICATION FAILURES")
		tw := report.NewTabWriter(w)
		report.Row(tw, "HOST", "COMPONENT", "CAUSE", "COUNT", "FIRST", "LAST", "BURSTS")
		for _, g := range r.Failures {
			report.Row(tw, g.Host, g.Component, causeLabel(g), thousands(g.Count), ts(g.First), ts(g.Last), bursts(g.Bursts, oneDay))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Context) > 0 {
		fmt.Fprintln(w, "\nCONTEXT EVENTS")
		tw := report.NewTabWriter(w)
		report.Row(tw, "HOST", "COMPONENT", "EVENT", "COUNT", "FIRST", "LAST")
		for _, g := range r.Context {
			report.Row(tw, g.Host, g.Component, g.Cause, thousands(g.Count), ts(g.First), ts(g.Last))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Unknown) > 0 {
		fmt.Fprintln(w, "\nUNKNOWN AUTHENTICATION ERRORS (no catalogue spelling matched)")
		tw := report.NewTabWriter(w)
		report.Row(tw, "HOST", "COMPONENT", "COUNT", "TEXT")
		for i, u := range r.Unknown {
			if i == 20 {
				report.Row(tw, "…", "", "", fmt.Sprintf("%d more", len(r.Unknown)-20))
				break
			}
			report.Row(tw, u.Host, u.Component, thousands(u.Count), clip(u.Text, 160))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	var problems []string
	for _, in := range r.Inputs {
		for _, p := range in.Problems {
			problems = append(problems, fmt.Sprintf("%s: %s", in.Name, p))
		}
		if in.SkippedLines > 0 {
			problems = append(problems, fmt.Sprintf("%s: %s lines skipped (binary or too long)", in.Name, thousands(int(in.SkippedLines))))
		}
	}
	if len(problems) > 0 {
		fmt.Fprintln(w, "\nINPUT PROBLEMS")
		fmt.Fprintln(w, "  "+strings.Join(problems, "\n  "))
	}
	return nil
}

func bursts(bs []Burst, oneDay bool) string {
	if len(bs) == 0 {
		return "-"
	}
	parts := make([]string, 0, 3)
	for i, b := range bs {
		if i == 2 {
			parts = append(parts, fmt.Sprintf("+%d", len(bs)-2))
			break
		}
		parts = append(parts, fmt.Sprintf("%s–%s (%s, peak %s/min)", clock(b.From, oneDay), clock(b.To, oneDay), thousands(b.Count), thousands(b.PeakPerMinute)))
	}
	return strings.Join(parts, ", ")
}
