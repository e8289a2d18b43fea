// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"time"

	"github.com/credwatch/credwatch/pkg/logs/envelope"
)

// minuteClock turns a worker's timestamps into times, remembering the minute it read last: lines in
// a log come minute after minute, so most of them only add their seconds to that minute's
// start. A nil minuteClock parses every timestamp (time.Parse, time.Date), which is what a clock's
// answers equal (TestClock, FuzzClock).
type minuteClock struct {
	// RFC 3339 in UTC ("2026-11-29T08:03:23.978Z"): the text up to the minute, a string of
	// its own, and that minute's start.
	rfcMinute string
	rfcStart  time.Time

	// klog's year-less header: the month, day, hour and minute, the reference time they were
	// read against, and the minute's start (withYear), kept only when every second of the
	// minute is on the same side of ref+24h (else withYear may move part of it a year back).
	klogKey   [4]int
	klogRef   time.Time
	klogStart time.Time
	klogOK    bool
}

// rfc3339 is time.Parse(time.RFC3339Nano, s).
func (c *minuteClock) rfc3339(s string) (time.Time, error) {
	if c != nil && len(s) >= 20 && len(s) <= 30 && s[:16] == c.rfcMinute && s[len(s)-1] == 'Z' {
		if ns, ok := secondsFrac(s[16 : len(s)-1]); ok {
			return c.rfcStart.Add(time.Duration(ns)), nil
		}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if c != nil && err == nil && len(s) >= 20 && s[16] == ':' && s[len(s)-1] == 'Z' && t.Location() == time.UTC {
		if _, ok := secondsFrac(s[16 : len(s)-1]); ok && s[:16] != c.rfcMinute {
			c.rfcMinute = string([]byte(s[:16])) // s may borrow a block's bytes
			c.rfcStart = t.Truncate(time.Minute)
		}
	}
	return t, err
}

// secondsFrac reads ":SS" or ":SS.F" (1 to 9 digits of fraction, seconds 00 to 59) as
// nanoseconds into the minute.
func secondsFrac(s string) (int64, bool) {
	if len(s) < 3 || s[0] != ':' || !envelope.IsDigits(s[1:3]) {
		return 0, false
	}
	sec := envelope.Digits2(s[1:3])
	if sec > 59 {
		return 0, false
	}
	ns := int64(sec) * 1e9
	if len(s) == 3 {
		return ns, true
	}
	frac := s[3:]
	if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 || !envelope.IsDigits(frac[1:]) {
		return 0, false
	}
	f := int64(0)
	for i := 1; i < 10; i++ {
		f *= 10
		if i < len(frac) {
			f += int64(frac[i] - '0')
		}
	}
	return ns + f, true
}

// klog is h.Time(ref).
func (c *minuteClock) klog(h envelope.Klog, ref time.Time) time.Time {
	if c == nil || ref.IsZero() || h.SS > 59 || h.US < 0 || h.US >= 1e6 {
		return h.Time(ref) // withYear reads the clock for a zero ref; seconds or fraction out of range
	}
	key := [4]int{h.Month, h.Day, h.HH, h.MM}
	if !c.klogOK || key != c.klogKey || c.klogRef != ref {
		start := envelope.WithYear(time.Month(h.Month), h.Day, h.HH, h.MM, 0, 0, ref)
		limit := ref.Add(24 * time.Hour)
		// withYear moves a time after limit a year back: the minute is one piece if it is
		// wholly after the limit or wholly not.
		first := time.Date(ref.Year(), time.Month(h.Month), h.Day, h.HH, h.MM, 0, 0, time.UTC)
		if first.After(limit) == first.Add(time.Minute-1).After(limit) {
			c.klogKey, c.klogRef, c.klogStart, c.klogOK = key, ref, start, true
		} else {
			c.klogOK = false
			return h.Time(ref)
		}
	}
	return c.klogStart.Add(time.Duration(h.SS)*time.Second + time.Duration(h.US)*time.Microsecond)
}
