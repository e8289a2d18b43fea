// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/logs/cause"
)

// IDs this package names in code. They are catalogue entries (TestCatalogueIDs checks them).
const (
	CauseUnknown = cause.Unknown
	CauseClient  = cause.Client
)

// Part is one element of an aggregate authentication error.
type Part = cause.Part

// Event is one classified line: an authentication failure (Kind "cause") or a context event
// (Kind "event").
type Event struct {
	Cause      string     `json:"cause"`
	Kind       string     `json:"kind"`
	Host       string     `json:"host"`
	Component  string     `json:"component"`
	Time       time.Time  `json:"time,omitzero"`
	Line       string     `json:"line"`
	Input      string     `json:"input,omitempty"`
	LineNumber int64      `json:"lineNumber,omitempty"`
	Format     string     `json:"format,omitempty"`
	Spelling   string     `json:"spelling,omitempty"`
	Text       string     `json:"text,omitempty"`
	Parts      []Part     `json:"parts,omitempty"`
	Truncated  bool       `json:"truncated,omitempty"`
	Audit      *AuditInfo `json:"audit,omitempty"`

	partialTime bool // Time has no year or zone of its own (Record.PartialTime)

	in   *inputState // with seq: LineNumber is relative to block seq of in until fixLineNumbers
	seq  int
	lent bool // Line and Audit borrow a block's bytes (worker.line) until own
	// cont is the part of Line, from contAt, that finishes a token broken at the end of the
	// line before (redact.BrokenTail), in a string of its own: redactEvidence takes it out.
	cont   string
	contAt int
}

// Classify is the last stage of reading a line: it names the cause of a parsed record with the
// catalogue's classifier (package cause, the one classifier) and turns it into an event; ok is
// false for lines that are neither an authentication failure nor a context event. cl is not
// safe for concurrent use: make one per goroutine (cause.NewClassifier; they are cheap).
func Classify(cl *cause.Classifier, r Record) (Event, bool) {
	var ev Event
	ok := classify(cl, &r, &ev)
	return ev, ok
}

// classify is Classify filling *ev, without copying records and events.
func classify(cl *cause.Classifier, r *Record, ev *Event) bool {
	m, ok := cl.Classify(r.line())
	return toEvent(r, ev, m, ok)
}

// line is what the classifier reads of r.
func (r *Record) line() cause.Line {
	l := cause.Line{Msg: r.Msg, Err: r.Err, Plain: r.Format == "plain", Truncated: r.Truncated, Audit: r.Audit != nil,
		Logger: r.Logger, Severity: r.Severity}
	if r.Audit != nil {
		l.Code = r.Audit.Code
	}
	return l
}

// toEvent is classify given the classifier's answer m, ok for r.
func toEvent(r *Record, ev *Event, m cause.Match, ok bool) bool {
	*ev = Event{Host: r.Host, Component: r.Component, Time: r.Time, Format: r.Format, Truncated: r.Truncated, partialTime: r.PartialTime}
	if !ok {
		return false
	}
	ev.Cause, ev.Kind, ev.Spelling, ev.Text, ev.Parts, ev.Audit = m.Cause, m.Kind, m.Spelling, m.Text, m.Parts, r.Audit
	if ev.Component == "" {
		ev.Component = m.Component
	}
	return true
}

// own gives ev its own copy of the strings that borrow block's bytes (worker.line): the line
// and the audit fields. Text, Parts, Host and Component are the classifier's and the memos'.
// It first notes Event.cont, which needs the line before in block (prev, for its first line:
// chunk.prev).
func (ev *Event) own(block []byte, prev string) {
	if !ev.lent {
		return
	}
	ev.lent = false
	ev.cont, ev.contAt = continued(block, prev, ev.Line)
	ev.Line = strings.Clone(ev.Line)
	if ev.Audit != nil {
		a := *ev.Audit
		a.User, a.UserAgent, a.Verb = strings.Clone(a.User), strings.Clone(a.UserAgent), strings.Clone(a.Verb)
		a.URI, a.AuditID = strings.Clone(a.URI), strings.Clone(a.AuditID)
		if a.SourceIPs != nil {
			ips := make([]string, len(a.SourceIPs))
			for i, ip := range a.SourceIPs {
				ips[i] = strings.Clone(ip)
			}
			a.SourceIPs = ips
		}
		ev.Audit = &a
	}
}
