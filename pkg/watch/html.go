// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/markup"
	"github.com/credwatch/credwatch/pkg/timechart"
)

// statusColour colours a member's lane: a ready member is ok, an unready one a warning (its
// findings are), a member that does not answer an error.
func statusColour(status string) string {
	switch status {
	case "ready":
		return timechart.OKColour
	case "unready":
		return timechart.WarningColour
	case "down":
		return timechart.ErrorColour
	}
	return ""
}

// WriteHTML writes the timeline as one self-contained HTML page (inline SVG and CSS, no scripts
// or external resources): one lane per member, under it one row per rejected trust cell, then
// the events.
func (t *Timeline) WriteHTML(w io.Writer, sum Summary) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	worst := string(sum.Worst)
	if worst == "" {
		worst = "none"
	}
	m := markup.New(w)
	m.Raw(pageHead)
	m.Elem("h1", "credwatch watch: "+fmtTime(t.start)+" – "+fmtTime(t.end))
	m.Open("p", "id", "summary")
	m.Textf("%d intervals · worst finding: ", sum.Intervals)
	m.Elem("b", worst)
	m.Textf(" · intervals started late: %d (max %s)", sum.Slipped, sum.MaxSlip.Round(time.Millisecond))
	m.Close("p")
	m.Raw("\n")
	chart := t.chart()
	chart.WriteSVG(m)
	m.Raw("\n<h2>Findings seen</h2>\n")
	if len(sum.Findings) == 0 {
		m.Elem("p", "none", "id", "findings")
	} else {
		m.Open("ul", "id", "findings")
		for _, id := range sortedKeys(sum.Findings) {
			f := sum.Findings[id]
			m.Elem("li", fmt.Sprintf("%s [%s] %s: %s", f.Severity, f.ID, f.Member, f.Message))
		}
		m.Close("ul")
	}
	m.Raw("\n<h2>Events</h2>")
	if t.dropped > 0 {
		m.Elem("p", fmt.Sprintf("%d older events not kept.", t.dropped))
	}
	m.Raw("\n<table id=\"events\"><tr><th>time</th><th>severity</th><th>kind</th><th>member</th><th>id</th><th>message</th></tr>\n")
	for _, e := range t.events {
		m.Open("tr")
		m.Elem("td", e.Time.UTC().Format("15:04:05"))
		m.Elem("td", string(e.Severity), "class", "sev-"+string(e.Severity))
		for _, s := range []string{string(e.Kind), e.Member, e.ID, e.Message} {
			m.Elem("td", s)
		}
		m.Close("tr")
		m.Raw("\n")
	}
	m.Raw("</table>\n</body></html>\n")
	return m.Err()
}

// chart is the timeline as a time chart: a lane per member coloured by its status, under it a
// row per rejected trust cell coloured by the severity of its cause.
func (t *Timeline) chart() *timechart.Chart {
	c := &timechart.Chart{ID: "timeline", Title: "members and rejected trust cells over time", From: t.start, To: t.end,
		Legend: []timechart.Key{{Colour: timechart.OKColour, Label: "ready"}, {Colour: timechart.WarningColour, Label: "unready"},
			{Colour: timechart.ErrorColour, Label: "down"}}}
	var sevs []catalogue.Severity
	for _, m := range t.members {
		row := timechart.Row{Label: m.Name, Class: "member"}
		for _, s := range m.Segs {
			row.Spans = append(row.Spans, timechart.Span{From: s.From, To: s.To, Colour: statusColour(s.Status),
				Title: fmt.Sprintf("%s %s %s–%s %s", m.Name, s.Status, fmtClock(s.From), fmtClock(s.To), s.Detail)})
		}
		c.Rows = append(c.Rows, row)
		for _, cell := range t.cells {
			if cell.Group != m.Name {
				continue
			}
			row := timechart.Row{Label: cell.Name, Class: "cell", Indent: true}
			for _, s := range cell.Segs {
				sev := causeSeverity(s.Status)
				if !slices.Contains(sevs, sev) {
					sevs = append(sevs, sev)
				}
				row.Spans = append(row.Spans, timechart.Span{From: s.From, To: s.To, Colour: timechart.SeverityColour(sev), Text: s.Status,
					Title: fmt.Sprintf("%s rejected (%s): %s %s–%s: %s", cell.Name, sev, s.Status, fmtClock(s.From), fmtClock(s.To), s.Detail)})
			}
			c.Rows = append(c.Rows, row)
		}
	}
	slices.SortFunc(sevs, func(a, b catalogue.Severity) int { return b.Rank() - a.Rank() })
	for _, s := range sevs {
		c.Legend = append(c.Legend, timechart.Key{Colour: timechart.SeverityColour(s), Label: "token rejected, " + string(s) + "-severity cause"})
	}
	return c
}

// causeSeverity is the catalogue's severity of the cause of a rejected token (error when the
// catalogue does not name it: a rejected token is an outage for whoever holds it).
func causeSeverity(cause string) catalogue.Severity {
	if e, ok := catalogue.Default().Get(cause); ok {
		return e.Severity
	}
	return catalogue.Error
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func fmtClock(t time.Time) string { return t.UTC().Format("15:04:05") }

const pageHead = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>credwatch watch timeline</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px} table{border-collapse:collapse;font-size:13px} td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
.member{font-weight:bold;font-size:13px} .cell{font-size:12px;fill:#555}
.sev-critical,.sev-error{color:#c8352e;font-weight:bold} .sev-warning{color:#b07800} .sev-info{color:#555}
</style></head><body>
`
