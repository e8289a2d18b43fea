// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package render

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/timechart"
)

type timelineRow struct {
	label string
	kind  string // "cause" or "event"
	group logs.Group
}

// timeline is the per-minute chart: one row per host and cause (and per host and context
// event), one mark per minute whose area grows with the count, coloured by the cause's
// severity; causes are circles, context events triangles. It is nil when there is nothing to
// plot; maxCount is the largest count in a minute.
func (r Report) timeline() (chart *timechart.Chart, maxCount int) {
	var rows []timelineRow
	for _, g := range r.Failures {
		rows = append(rows, timelineRow{label: g.Host + " · " + g.Cause, kind: "cause", group: g})
	}
	for _, g := range r.Context {
		rows = append(rows, timelineRow{label: g.Host + " · " + g.Cause, kind: "event", group: g})
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].group.Host != rows[j].group.Host {
			return rows[i].group.Host < rows[j].group.Host
		}
		return rows[i].kind < rows[j].kind
	})
	maxCount = 1
	for _, row := range rows {
		for _, m := range row.group.PerMinute {
			maxCount = max(maxCount, m.Count)
		}
	}
	c := &timechart.Chart{Title: "Authentication failures and context events per minute (UTC)"}
	type key struct {
		sev   catalogue.Severity
		shape timechart.Shape
	}
	var keys []key
	for _, row := range rows {
		if len(row.group.PerMinute) == 0 {
			continue
		}
		colour, shape := timechart.SeverityColour(row.group.Severity), timechart.Circle
		if row.kind == "event" {
			shape = timechart.Triangle
		}
		if k := (key{row.group.Severity, shape}); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		out := timechart.Row{Label: row.label}
		for _, m := range row.group.PerMinute {
			at := m.Minute.Time()
			out.Marks = append(out.Marks, timechart.Mark{At: at.Add(30 * time.Second), Size: math.Sqrt(float64(m.Count) / float64(maxCount)),
				Colour: colour, Shape: shape, Title: fmt.Sprintf("%s: %d in the minute from %s UTC (%s)", row.label, m.Count, at.UTC().Format("2006-01-02 15:04"), row.group.Severity)})
		}
		c.Rows = append(c.Rows, out)
	}
	if len(c.Rows) == 0 {
		return nil, maxCount
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.shape != b.shape {
			return int(a.shape - b.shape)
		}
		return b.sev.Rank() - a.sev.Rank()
	})
	for _, k := range keys {
		what := "authentication failure"
		if k.shape == timechart.Triangle {
			what = "context event"
		}
		c.Legend = append(c.Legend, timechart.Key{Shape: k.shape, Colour: timechart.SeverityColour(k.sev), Label: fmt.Sprintf("%s (%s)", what, k.sev)})
	}
	if !r.Summary.From.IsZero() {
		pad := max(r.Summary.To.Sub(r.Summary.From)*3/100, 2*time.Minute)
		c.From, c.To = r.Summary.From.Add(-pad), r.Summary.To.Add(pad)
	}
	return c, maxCount
}
