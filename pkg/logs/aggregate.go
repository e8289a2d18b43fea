// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"github.com/credwatch/credwatch/pkg/logs/internal/agg"
)

// aggregator is a worker's (or the merged) aggregate of events: per host, component and cause,
// with the bounded evidence of each (package agg).
type aggregator = agg.Aggregator[Event]

func newAggregator(evidence int) *aggregator { return agg.New(evidence, earlier, evidenceView) }

// addEvent counts ev in its group: a client's 401s per client, an unknown cause's texts
// verbatim, and the other causes its parts name.
func addEvent(a *aggregator, ev *Event) {
	k := agg.Key{Host: ev.Host, Component: ev.Component, Cause: ev.Cause}
	if ev.Cause == CauseClient {
		k.Client = clientOf(ev.Audit)
	}
	g := a.Add(k, ev.Kind, ev.Time, ev, ev.lent)
	if ev.Cause == CauseUnknown {
		g.CountText(ev.Text)
	}
	for _, p := range ev.Parts {
		if p.Cause != "" && p.Cause != ev.Cause {
			g.Relate(p.Cause)
		}
	}
}

// earlier orders events by time, then input and line.
func earlier(a, b *Event) bool {
	if !a.Time.Equal(b.Time) {
		return a.Time.Before(b.Time)
	}
	if a.Input != b.Input {
		return a.Input < b.Input
	}
	return a.LineNumber < b.LineNumber
}

// evidenceView is a group's kept events, sorted, as evidence: without duplicates, redacted.
func evidenceView(sorted []Event) []Event {
	out := sorted[:0]
	for i, ev := range sorted {
		if i > 0 && ev.Input == sorted[i-1].Input && ev.LineNumber == sorted[i-1].LineNumber && ev.Line == sorted[i-1].Line {
			continue
		}
		redactEvidence(&ev)
		out = append(out, ev)
	}
	return out
}
