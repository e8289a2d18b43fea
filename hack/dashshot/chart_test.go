// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"reflect"
	"testing"
	"time"
)

func TestFormatValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		unit string
		v    float64
		want string
	}{
		{"percentunit", 0, "0%"},
		{"percentunit", 0.025, "2.5%"},
		{"percentunit", 0.6, "60%"},
		{"percentunit", -0.0015, "-0.15%"},
		{"percent", 12.5, "12.5%"},
		{"s", 0, "0 s"},
		{"s", 0.25, "250 ms"},
		{"s", 45, "45 s"},
		{"s", 90, "1.5 min"},
		{"s", 7200, "2 hour"},
		{"s", 86400 * 3, "3 day"},
		{"s", 86400 * 300, "42.9 week"},
		{"s", 3.15576e7 * 2, "2 year"},
		{"ms", 1500, "1.5 s"},
		{"short", 0.5, "0.5"},
		{"short", 12000, "12 K"},
		{"short", 2.5e6, "2.5 Mil"},
		{"", 3, "3"},
		{"none", 1, "1"},
		{"reqps", 3.25, "3.25 req/s"},
		{"ops", 1500, "1.5 K ops/s"},
		{"bytes", 2048, "2 KiB"},
		{"widgets", 4, "4 widgets"},
		{"short", 1.23456, "1.23"},
		{"short", 123.456, "123"},
	} {
		if got := formatValue(tc.unit, tc.v); got != tc.want {
			t.Errorf("formatValue(%q, %v) = %q, want %q", tc.unit, tc.v, got, tc.want)
		}
	}
}

func TestValueRange(t *testing.T) {
	t.Parallel()
	ss := func(vs ...float64) []series {
		s := series{}
		for _, v := range vs {
			s.Samples = append(s.Samples, sample{V: v})
		}
		return []series{s}
	}
	one, two := 1.0, 2.0
	for _, tc := range []struct {
		name           string
		in             []series
		fmin, fmax     *float64
		wantLo, wantHi float64
	}{
		{"positive includes 0", ss(0.2, 0.6), nil, nil, 0, 0.6},
		{"negative includes 0", ss(-3, -1), nil, nil, -3, 0},
		{"both sides", ss(-0.1, 0.5), nil, nil, -0.1, 0.5},
		{"flat zero", ss(0, 0), nil, nil, 0, 1},
		{"no samples", nil, nil, nil, 0, 1},
		{"fixed", ss(0.2, 5), &one, &two, 1, 2},
	} {
		lo, hi := valueRange(tc.in, tc.fmin, tc.fmax)
		if lo != tc.wantLo || hi != tc.wantHi {
			t.Errorf("%s: [%v, %v], want [%v, %v]", tc.name, lo, hi, tc.wantLo, tc.wantHi)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lo, hi         float64
		n              int
		want           []float64
		wantLo, wantHi float64
	}{
		{0, 0.62, 5, []float64{0, 0.2, 0.4, 0.6, 0.8}, 0, 0.8},
		{0, 1, 5, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, 0, 1},
		{-0.05, 0.6, 4, []float64{-0.2, 0, 0.2, 0.4, 0.6}, -0.2, 0.6},
		{0, 25920000, 4, []float64{0, 1e7, 2e7, 3e7}, 0, 3e7},
		{0, 7, 3, []float64{0, 2.5, 5, 7.5}, 0, 7.5},
	} {
		got, lo, hi := niceTicks(tc.lo, tc.hi, tc.n)
		if !approxEqual(got, tc.want) || lo != tc.wantLo || !approxEqual([]float64{hi}, []float64{tc.wantHi}) {
			t.Errorf("niceTicks(%v, %v, %d) = %v [%v, %v], want %v [%v, %v]", tc.lo, tc.hi, tc.n, got, lo, hi, tc.want, tc.wantLo, tc.wantHi)
		}
	}
}

func approxEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if d := a[i] - b[i]; d > 1e-9 || d < -1e-9 {
			return false
		}
	}
	return true
}

func TestTimeTicks(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 7, 17, 3, 20, 0, time.UTC)
	for _, tc := range []struct {
		rng        time.Duration
		max        int
		wantFirst  string
		wantN      int
		wantLayout string
	}{
		{30 * time.Minute, 6, "17:05", 6, "15:04"},      // 5m steps from 17:05 to 17:30
		{2 * time.Minute, 6, "17:03:30", 4, "15:04:05"}, // 30s
		{6 * time.Hour, 8, "18:00", 6, "15:04"},         // 1h
		{3 * 24 * time.Hour, 4, "12/08 00:00", 3, "01/02 15:04"},
	} {
		ts, layout := timeTicks(start, start.Add(tc.rng), tc.max)
		if len(ts) != tc.wantN || layout != tc.wantLayout || ts[0].Format(layout) != tc.wantFirst {
			t.Errorf("range %s: %d ticks from %s (%s), want %d from %s (%s)", tc.rng, len(ts), ts[0].Format(layout), layout, tc.wantN, tc.wantFirst, tc.wantLayout)
		}
	}
}

func TestLinePath(t *testing.T) {
	t.Parallel()
	start := time.Unix(0, 0).UTC()
	at := func(s int, v float64) sample { return sample{T: start.Add(time.Duration(s) * time.Second), V: v} }
	sc := scale{start: start, end: start.Add(100 * time.Second), lo: 0, hi: 1, x0: 10, y0: 5, w: 100, h: 50}
	samples := []sample{at(0, 0), at(10, 0.5), at(20, 1), at(50, 0.5), at(80, 0.25), at(90, 0)}
	path, dots := linePath(sc, samples, 10*time.Second)
	if want := "M10,55 L20,30 L30,5 M60,30 M90,42.5 L100,55"; path != want {
		t.Errorf("path %q, want %q", path, want)
	}
	if want := [][2]float64{{60, 30}}; !reflect.DeepEqual(dots, want) {
		t.Errorf("dots %v, want %v", dots, want)
	}
	if path, dots := linePath(sc, []sample{at(100, 1)}, 10*time.Second); path != "M110,5" || len(dots) != 1 {
		t.Errorf("one sample: %q %v", path, dots)
	}
}
