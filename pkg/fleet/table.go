// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package fleet

import (
	"fmt"
	"io"

	"github.com/credwatch/credwatch/pkg/report"
)

// WriteTable writes one row per cluster.
func (r *Report) WriteTable(w io.Writer, _ report.TableOptions) error {
	tw := report.NewTabWriter(w)
	report.Row(tw, "CONTEXT", "SERVER", "WORST", "MEMBERS", "TRUST BROKEN", "PARTIAL", "ERROR")
	for _, c := range r.Clusters {
		s := c.Summary
		worst, members, broken, partial := "none", fmt.Sprintf("%d/%d up", s.ReachableMembers, s.Members), fmt.Sprint(s.BrokenTrustPairs), report.YesNo(s.Partial)
		switch {
		case c.Report == nil:
			worst, members, broken, partial = "-", "-", "-", "-"
		case s.WorstFinding != "":
			worst = fmt.Sprintf("%s (%s)", s.Worst, s.WorstFinding)
		}
		if s.Unreachable && c.Report != nil && c.Error == "" {
			c.Error = "no member reachable"
		}
		report.Row(tw, c.Context, report.OrDash(c.Server), worst, members, broken, partial, report.OrDash(c.Error))
	}
	return tw.Flush()
}
