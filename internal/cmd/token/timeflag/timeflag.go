// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package timeflag parses the time flags of the token commands (--at, --iat): RFC 3339, a Unix
// time, "now", or a duration relative to now such as -10m or +2h.
package timeflag

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Parse reads s relative to now. Empty means now.
func Parse(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || s == "now":
		return now, nil
	case strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+"):
		d, err := time.ParseDuration(s)
		if err != nil {
			return time.Time{}, fmt.Errorf("time %q: relative times look like -10m or +2h30m", s)
		}
		return now.Add(d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("time %q: want RFC 3339 (2026-11-29T12:00:00Z), Unix seconds, now, or relative (-10m, +2h)", s)
}
