// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package render

import (
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/redact"
)

// SARIF renders the report as SARIF 2.1.0 through finding.SARIF: one result per classified line
// the report keeps (Events: the evidence of every host, component and cause, --evidence of
// them), with the file and line it was read from as its physicalLocation, the host as its
// logical location, and the cause as its rule. Its message is the cause's title and the line,
// redacted again here, whatever printer writes it.
func (r Report) SARIF() any {
	return finding.SARIF(finding.Tool{Name: "credwatch logs", Version: r.ToolVersion}, r.findings())
}

// findings are the report's events as findings, in the report's order (earliest first).
func (r Report) findings() []finding.Finding {
	cat := r.Catalogue()
	if cat == nil {
		cat = catalogue.Default()
	}
	fs := make([]finding.Finding, 0, len(r.Events))
	for _, ev := range r.Events {
		e, ok := cat.Get(ev.Cause)
		if !ok {
			e = catalogue.Entry{ID: ev.Cause, Severity: catalogue.Info, Title: ev.Cause, Meaning: ev.Cause, Remedy: "-"}
		}
		where := ev.Host
		if ev.Component != "" && ev.Component != "-" {
			where += " (" + ev.Component + ")"
		}
		fs = append(fs, finding.Finding{ID: ev.Cause, Severity: e.Severity, Title: e.Title, Member: ev.Host,
			Message:     redact.Text(e.Title + " on " + where + ": " + ev.Line),
			Explanation: e.Meaning, Remedy: e.Remedy,
			Location: &finding.Location{File: redact.Text(ev.Input), Line: ev.LineNumber}})
	}
	return fs
}
