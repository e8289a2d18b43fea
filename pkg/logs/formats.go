// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"time"

	"github.com/credwatch/credwatch/pkg/logs/envelope"
)

// parseCRI reads the CRI envelope (envelope.CRI) with its time read by c (nil: time.Parse): a
// line whose timestamp is no RFC 3339 time is not CRI.
func parseCRI(line string, c *minuteClock) (rest string, t time.Time, ok bool) {
	rest, ts, ok := envelope.CRI(line)
	if !ok {
		return "", t, false
	}
	if t, err := c.rfc3339(ts); err == nil {
		return rest, t, true
	}
	return "", t, false
}

// readKlogBody fills Msg, Err, Truncated and Audit from a klog message.
func readKlogBody(body string, r *Record) {
	msg, err, truncated := envelope.KlogBody(body)
	r.Msg, r.Truncated = msg, r.Truncated || truncated
	if r.Err == "" { // an outer envelope's err stands
		r.Err = err
	}
	if a, ok := envelope.AccessLog401(body); ok {
		r.Audit = a
	}
}
