// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/report"
)

// TestTableCollapsesSkips: one unreadable source skips three checks; the table says so in one
// finding line and stderr's reasons come once (SkippedByReason), while the report keeps each.
// The reason is whole, wrapped.
func TestTableCollapsesSkips(t *testing.T) {
	why := "get probe service account credwatch/credwatch-probe: forbidden " + strings.Repeat("x", 600)
	s := &Snapshot{Server: "https://127.0.0.1:6443", Now: time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC),
		Members: []Member{{Endpoint: Endpoint{Name: "apiserver-1"}, Reachable: true}}, Sources: map[string]string{SrcMatrix: why}}
	r := Run(s, Registry())
	var b bytes.Buffer
	if err := r.WriteTable(&b, report.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "check-skipped"); n >= len(r.Skipped) {
		t.Errorf("%d check-skipped lines for %d skipped checks:\n%s", n, len(r.Skipped), out)
	}
	if !strings.Contains(out, "check-skipped [3: audience-drift, issuer-drift, key-drift]") {
		t.Errorf("the trust-matrix skips are not one line:\n%s", out)
	}
	// Prose wraps and is never cut: the whole reason is there.
	if !strings.Contains(out, strings.Repeat("x", 600)) || strings.Contains(out, "more bytes in -o json") {
		t.Errorf("a 600-byte reason is cut:\n%s", out)
	}
	groups := r.SkippedByReason()
	for _, g := range groups {
		if strings.HasPrefix(g.Reason, SrcMatrix) && len(g.Checks) != 3 {
			t.Errorf("trust-matrix group %v, want its three checks", g.Checks)
		}
	}
	if len(groups) >= len(r.Skipped) {
		t.Errorf("%d reason groups for %d skips", len(groups), len(r.Skipped))
	}
}
