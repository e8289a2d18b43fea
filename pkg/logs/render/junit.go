// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package render

import (
	"io"
	"strings"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/redact"
)

// WriteJUnit renders the verdict as JUnit XML: one test case per cause the verdict names, failed
// when its severity is at or above FailOn (as the exit code), or one passing case, "verdict",
// when the logs name no cause. Context events are never test cases: they explain, they do not
// fail.
func (r Report) WriteJUnit(w io.Writer) error {
	failOn := r.FailOn
	if failOn == "" {
		failOn = catalogue.Error
	}
	order := []string{}
	cases := map[string][]finding.Finding{}
	for _, h := range r.Verdict {
		name := h.Cause + " on " + strings.Join(h.Hosts, ", ")
		if _, ok := cases[name]; !ok {
			order = append(order, name)
		}
		cases[name] = append(cases[name], finding.Finding{ID: h.Cause, Severity: h.Severity, Title: h.Title,
			Message: redact.Text(h.Statement), Explanation: redact.Text(h.Statement), Remedy: h.Remedy})
	}
	if len(order) == 0 {
		order = append(order, "verdict")
	}
	return finding.WriteJUnit(w, "credwatch logs", order, cases, nil, failOn)
}
