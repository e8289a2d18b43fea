// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/markup"
)

// WriteHTML writes a self-contained page (no external resources): the verdict, the per-minute
// chart (package timechart, inline SVG), the tables and the evidence lines. Everything on it was
// redacted when the report was made; package markup escapes it.
func (r Report) WriteHTML(w io.Writer) error {
	m := markup.New(w)
	m.Raw(pageHead)
	s := r.Summary
	m.Elem("p", fmt.Sprintf("Read %d of %d inputs: %d lines, %d authentication failures, %d context events, %d skipped lines.",
		s.InputsRead, s.Inputs, s.Lines, s.AuthFailures, s.ContextEvents, s.SkippedLines), "id", "summary")

	m.Raw("\n\n<h2>Verdict</h2>\n")
	if len(r.Verdict) == 0 {
		m.Elem("p", "No authentication failures found.", "id", "verdict")
	} else {
		m.Open("ol", "id", "verdict")
		for _, h := range r.Verdict {
			m.Raw("\n")
			m.Open("li", "class", "sev-"+string(h.Severity))
			m.Elem("strong", "["+string(h.Severity)+"] "+h.Cause)
			m.Text(": " + h.Statement)
			m.Raw("\n")
			m.Elem("div", "Remedy: "+h.Remedy, "class", "remedy")
			m.Close("li")
		}
		m.Raw("\n</ol>")
	}

	m.Raw("\n\n<h2>Timeline</h2>\n<div id=\"timeline\">")
	if chart, most := r.timeline(); chart == nil {
		m.Raw("<p>Nothing to plot.</p>")
	} else {
		m.Elem("p", fmt.Sprintf("One row per host and cause, one mark per minute; its area grows with the lines in that minute (at most %d).", most), "class", "note")
		chart.WriteSVG(m)
	}
	m.Raw("</div>\n")

	if len(r.Failures) > 0 {
		m.Raw("\n<h2>Authentication failures</h2>\n<table id=\"failures\"><tr><th>Host</th><th>Component</th><th>Cause</th><th>Count</th><th>First</th><th>Last</th></tr>\n")
		for _, g := range r.Failures {
			row(m, g.Host, g.Component, causeLabel(g), strconv.Itoa(g.Count), stamp(g.First), stamp(g.Last))
		}
		m.Raw("</table>")
	}
	if len(r.Context) > 0 {
		m.Raw("\n\n<h2>Context events</h2>\n<table id=\"context\"><tr><th>Host</th><th>Component</th><th>Event</th><th>Count</th><th>First</th><th>Last</th></tr>\n")
		for _, g := range r.Context {
			row(m, g.Host, g.Component, g.Cause, strconv.Itoa(g.Count), stamp(g.First), stamp(g.Last))
		}
		m.Raw("</table>")
	}

	m.Raw("\n\n<h2>Evidence</h2>\n<div id=\"evidence\">")
	for _, groups := range [][]logs.Group{r.Failures, r.Context} {
		for _, g := range groups {
			m.Elem("h3", fmt.Sprintf("%s · %s · %s ×%d", g.Host, g.Component, g.Cause, g.Count))
			m.Raw("\n<pre>")
			for _, e := range g.Evidence() {
				m.Textf("%s:%d: %s\n", e.Input, e.LineNumber, e.Line)
			}
			m.Raw("</pre>")
		}
	}
	m.Raw("</div>\n")

	if len(r.Unknown) > 0 {
		m.Raw("\n<h2>Unknown credential errors</h2>\n<table id=\"unknown\"><tr><th>Host</th><th>Component</th><th>Count</th><th>Nearest family</th><th>Words</th><th>Text</th></tr>\n")
		for _, u := range r.Unknown {
			row(m, u.Host, u.Component, strconv.Itoa(u.Count), u.Family, strings.Join(u.Words, ", "), u.Text)
		}
		m.Raw("</table>")
	}

	m.Raw("\n\n<h2>Inputs</h2>\n<table id=\"inputs\"><tr><th>Input</th><th>Lines</th><th>Matched</th><th>Skipped</th><th>Problems</th></tr>\n")
	for _, in := range r.Inputs {
		m.Open("tr")
		for _, s := range []string{in.Name, strconv.FormatInt(in.Lines, 10), strconv.FormatInt(in.MatchedLines, 10), strconv.FormatInt(in.SkippedLines, 10)} {
			m.Elem("td", s)
		}
		m.Open("td")
		for _, p := range in.Problems {
			m.Text(p)
			m.Raw("<br>")
		}
		m.Close("td")
		m.Raw("</tr>\n")
	}
	m.Raw("</table>\n</body>\n</html>\n")
	return m.Err()
}

// row writes one table row of escaped cells.
func row(m *markup.Writer, cells ...string) {
	m.Open("tr")
	for _, c := range cells {
		m.Elem("td", c)
	}
	m.Raw("</tr>\n")
}

// stamp is t for a table cell, "-" when unknown.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

const pageHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>credwatch logs: authentication failures</title>
<style>
body { font-family: sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
pre { background: #f7f7f7; padding: 0.5em; overflow-x: auto; font-size: 0.8em; }
.sev-critical, .sev-error { color: #b00020; } .sev-warning { color: #a15c00; } .sev-info { color: #555; }
.remedy { margin-left: 1.5em; color: #333; }
.note { font-size: 0.9em; color: #555; }
#timeline svg { max-width: 100%; height: auto; border: 1px solid #ddd; }
</style>
</head>
<body>
<h1>credwatch logs</h1>
`
