// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package finding is the shape every diagnosing command (check, logs, cloud) reports in: a
// catalogue ID with its severity, the evidence that raised it, the explanation and the remedy.
package finding

import (
	"cmp"
	"slices"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// Evidence is one observed fact behind a finding.
type Evidence struct {
	Member string `json:"member,omitempty"`
	Object string `json:"object,omitempty"`
	Key    string `json:"key,omitempty"`
	Value  string `json:"value"`
}

// Finding is one diagnosis.
type Finding struct {
	ID          string             `json:"id"`
	Severity    catalogue.Severity `json:"severity"`
	Title       string             `json:"title"`
	Member      string             `json:"member,omitempty"`
	Object      string             `json:"object,omitempty"`
	Message     string             `json:"message"`
	Explanation string             `json:"explanation"`
	Remedy      string             `json:"remedy"`
	Evidence    []Evidence         `json:"evidence,omitempty"`
	// Location is the line of a file the finding was read from (logs) or is about (preflight's
	// input), or nil.
	Location *Location `json:"location,omitempty"`
}

// Location is a line of a file: SARIF's physicalLocation.
type Location struct {
	File string `json:"file"` // as the user named it: a path, "-" for stdin, or pod/container
	Line int64  `json:"line"` // from 1; 0 when unknown
}

// New builds a finding from the catalogue entry id; message says what was seen here.
// Severity, title, explanation and remedy come from the catalogue.
func New(id, message string, ev ...Evidence) Finding {
	e := catalogue.Default().MustGet(id)
	return Finding{ID: id, Severity: e.Severity, Title: e.Title, Message: message,
		Explanation: e.Meaning, Remedy: e.Remedy, Evidence: ev}
}

// WithSeverity overrides the catalogue's default severity.
func (f Finding) WithSeverity(s catalogue.Severity) Finding { f.Severity = s; return f }

// On names the member and object the finding is about.
func (f Finding) On(member, object string) Finding { f.Member, f.Object = member, object; return f }

// Sort orders findings by severity (worst first), then ID, member and object.
func Sort(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(b.Severity.Rank(), a.Severity.Rank()), cmp.Compare(a.ID, b.ID),
			cmp.Compare(a.Member, b.Member), cmp.Compare(a.Object, b.Object))
	})
}

// Worst is the highest severity among fs, or "" when fs is empty.
func Worst(fs []Finding) catalogue.Severity {
	var w catalogue.Severity
	for _, f := range fs {
		if f.Severity.Rank() > w.Rank() {
			w = f.Severity
		}
	}
	return w
}

// AnyAtLeast reports whether a finding is at or above s.
func AnyAtLeast(fs []Finding, s catalogue.Severity) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Severity.AtLeast(s) })
}
