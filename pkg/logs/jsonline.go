// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"time"

	"github.com/credwatch/credwatch/pkg/logs/envelope"
	"github.com/credwatch/credwatch/pkg/logs/internal/quoted"
)

// parseJSONLine reads a JSON line (envelope.JSONLine) into r. It returns the inner line to unwrap
// further (Docker's "log"), or done when r is complete. The inner line of a Docker line may be in
// sc (quoted.Scratch); c, if not nil, reads its time.
func parseJSONLine(line string, r *Record, sc *quoted.Scratch, c *minuteClock) (inner string, t time.Time, done bool) {
	j := envelope.JSONLine(line, sc)
	r.addFormat(j.Format)
	r.Truncated = r.Truncated || j.Truncated
	t = j.Time
	if j.TimeText != "" {
		t, _ = c.rfc3339(j.TimeText)
	}
	if j.Format == "docker" {
		return j.Inner, t, false
	}
	if j.Component != "" {
		r.Component = j.Component
	}
	r.Msg, r.Err, r.Severity, r.Source, r.Logger, r.Audit = j.Msg, j.Err, j.Level, j.Caller, j.Logger, j.Audit
	if j.Host != "" && r.Host == "" {
		r.Host = shortHost(j.Host)
	}
	r.Time = t
	return "", t, true
}
