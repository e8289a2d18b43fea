// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package render

import (
	"time"

	"github.com/credwatch/credwatch/pkg/logs"
)

// Report is a logs.Report with the renderers report.Print looks for (report.Tabular,
// report.SARIFer); its JSON and YAML are the embedded report's.
type Report struct{ *logs.Report }

// New wraps r for report.Print.
func New(r *logs.Report) Report { return Report{r} }

// causeLabel is a group's cause as the table shows it: with its client, and the cause that
// explains a client's 401s.
func causeLabel(g logs.Group) string {
	s := g.Cause
	if g.Client != "" {
		s += " [" + g.Client + "]"
	}
	if g.Explained != "" {
		s += " → " + g.Explained
	}
	return s
}

// clock is t for a table cell: the time of day alone when the report spans one day.
func clock(t time.Time, oneDay bool) string {
	layout := "2006-01-02 15:04:05"
	if oneDay {
		layout = "15:04:05"
	}
	return t.UTC().Format(layout)
}
