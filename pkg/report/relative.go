// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"fmt"
	"time"
)

// Relative says how far t is from now in words: "3m ago", "in 57m", "now".
func Relative(t, now time.Time) string {
	d := t.Sub(now)
	if d > -time.Second && d < time.Second {
		return "now"
	}
	if d < 0 {
		return Duration(-d) + " ago"
	}
	return "in " + Duration(d)
}

// Duration is a short human duration: 45s, 3m, 2h5m, 3d4h, 1y2d.
func Duration(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		m := int(d.Minutes())
		if s := int(d.Seconds()) % 60; s != 0 && m < 10 {
			return fmt.Sprintf("%dm%ds", m, s)
		}
		return fmt.Sprintf("%dm", m)
	case d < 48*time.Hour:
		h := int(d.Hours())
		if m := int(d.Minutes()) % 60; m != 0 {
			return fmt.Sprintf("%dh%dm", h, m)
		}
		return fmt.Sprintf("%dh", h)
	case d < 365*24*time.Hour:
		days := int(d.Hours()) / 24
		if h := int(d.Hours()) % 24; h != 0 {
			return fmt.Sprintf("%dd%dh", days, h)
		}
		return fmt.Sprintf("%dd", days)
	default:
		y := int(d.Hours()) / (24 * 365)
		days := (int(d.Hours()) / 24) % 365
		if days != 0 {
			return fmt.Sprintf("%dy%dd", y, days)
		}
		return fmt.Sprintf("%dy", y)
	}
}
