// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"fmt"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/logs/envelope"
)

// TestClock checks that a minuteClock's times are time.Parse's and envelope.Klog.time's, exactly
// (==, location included), on sequences of timestamps within a minute, across minutes, out of
// range and around the year boundary that withYear moves.
func TestClock(t *testing.T) {
	t.Parallel()
	rfc := []string{"2026-11-29T08:03:23.978Z", "2026-11-29T08:03:23Z", "2026-11-29T08:03:59.999999999Z",
		"2026-11-29T08:03:00.1Z", "2026-11-29T08:03:60Z", "2026-11-29T08:03:23.9780000001Z", "2026-11-29T08:03:23,978Z",
		"2026-11-29T08:04:01.5Z", "2026-11-29T08:03:23.978+01:00", "2026-11-29T08:03:23.978z", "2026-11-29T08:03:2.5Z",
		"2026-02-29T08:03:23Z", "2024-02-29T08:03:23Z", "2024-02-29T08:03:23.Z", "2024-02-29T08:03:23.x1Z",
		"2024-02-29T08:03:23.12345678ZZ", "2024-02-29T24:03:23Z", "2024-02-29T08:03:-1Z", ""}
	c := &minuteClock{}
	for round := range 2 {
		for _, s := range rfc {
			for _, prev := range rfc { // whatever minute the clock holds
				c.rfc3339(prev)
				got, gerr := c.rfc3339(s)
				want, werr := time.Parse(time.RFC3339Nano, s)
				if got != want || (gerr == nil) != (werr == nil) {
					t.Fatalf("round %d: after %q, %q: %v, %v; want %v, %v", round, prev, s, got, gerr, want, werr)
				}
			}
		}
	}
	refs := []time.Time{time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC), time.Date(2026, 12, 30, 23, 59, 30, 0, time.UTC),
		time.Date(2026, 12, 31, 8, 3, 30, 500, time.UTC), time.Date(2025, 2, 28, 8, 3, 0, 0, time.UTC), {}}
	heads := []string{"E1129 08:03:23.978000", "E1129 08:03:23", "I1231 08:03:59.999999", "I0101 08:03:00.000001",
		"W1231 23:59:31.5", "W0101 00:00:00", "E0229 08:03:23.1", "E0229 08:04:30.1", "E1129 08:03:99.1",
		"E1129 99:99:00.1", "E1231 08:03:30.000400", "E1231 08:03:30.000600", "E0101 08:03:30.0000005", "E0231 08:03:30"}
	for _, ref := range refs {
		for _, a := range heads {
			for _, b := range heads {
				ha, ok1 := envelope.KlogHeader(a + " 1 x.go:1] m")
				hb, ok2 := envelope.KlogHeader(b + " 1 x.go:1] m")
				if !ok1 || !ok2 {
					t.Fatalf("%q or %q is no klog header", a, b)
				}
				c.klog(ha, ref)
				got := c.klog(hb, ref)
				if want := hb.Time(ref); !ref.IsZero() && got != want {
					t.Fatalf("ref %v: after %q, %q: %v, want %v", ref, a, b, got, want)
				}
			}
		}
	}
}

// FuzzClock checks a minuteClock against time.Parse and envelope.Klog.time on any pair of
// timestamps.
func FuzzClock(f *testing.F) {
	f.Add("2026-11-29T08:03:23.978Z", "2026-11-29T08:03:24.5Z", uint32(1129), uint32(80323), uint32(978000), int64(0))
	f.Add("2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z", uint32(1231), uint32(235959), uint32(5), int64(86400*365))
	ref0 := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, a, b string, md, hms, us uint32, refOff int64) {
		c := &minuteClock{}
		for _, s := range []string{a, b, a} {
			got, gerr := c.rfc3339(s)
			want, werr := time.Parse(time.RFC3339Nano, s)
			if got != want || (gerr == nil) != (werr == nil) {
				t.Fatalf("%q: %v, %v; want %v, %v", s, got, gerr, want, werr)
			}
		}
		ref := ref0.Add(time.Duration(refOff%(400*86400)) * time.Second)
		line := func(d uint32) string {
			return fmt.Sprintf("E%04d %02d:%02d:%02d.%06d 1 x.go:1] m", md%10000, hms/10000%100, hms/100%100, hms%100, (us+d)%10000000)
		}
		for _, s := range []string{line(0), line(1), line(999999)} {
			h, ok := envelope.KlogHeader(s)
			if !ok {
				return
			}
			if got, want := c.klog(h, ref), h.Time(ref); got != want {
				t.Fatalf("%q against %v: %v, want %v", s, ref, got, want)
			}
		}
	})
}
