// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// formatValue writes v in a Grafana unit (fieldConfig.defaults.unit) the way Grafana's value
// formats do, with at most three significant decimals and no trailing zeros: percentunit 0.025 →
// "2.5%", s 90 → "1.5 min", short 12000 → "12 K", reqps 3 → "3 req/s". An unknown unit is drawn
// as short with the unit after it.
func formatValue(unit string, v float64) string {
	switch unit {
	case "percentunit":
		return num(v*100) + "%"
	case "percent":
		return num(v) + "%"
	case "s":
		return seconds(v)
	case "ms":
		return seconds(v / 1000)
	case "reqps":
		return short(v) + " req/s"
	case "ops":
		return short(v) + " ops/s"
	case "bytes":
		return scaled(v, 1024, []string{" B", " KiB", " MiB", " GiB", " TiB", " PiB"})
	case "", "short", "none":
		return short(v)
	default:
		return short(v) + " " + unit
	}
}

func short(v float64) string {
	return scaled(v, 1000, []string{"", " K", " Mil", " Bil", " Tri", " Quadr"})
}

// scaled divides v by factor until it is below factor, and names the step with suffixes.
func scaled(v, factor float64, suffixes []string) string {
	i := 0
	for math.Abs(v) >= factor && i < len(suffixes)-1 {
		v /= factor
		i++
	}
	return num(v) + suffixes[i]
}

// seconds is Grafana's "s" unit (toSeconds): ms below a second, then s, min, hour, day, week, year.
func seconds(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0 s"
	case a < 1:
		return num(v*1000) + " ms"
	case a < 60:
		return num(v) + " s"
	case a < 3600:
		return num(v/60) + " min"
	case a < 86400:
		return num(v/3600) + " hour"
	case a < 604800:
		return num(v/86400) + " day"
	case a < 31536000:
		return num(v/604800) + " week"
	default:
		return num(v/3.15576e7) + " year"
	}
}

// num writes v with up to three significant decimals and no trailing zeros.
func num(v float64) string {
	a := math.Abs(v)
	prec := 3
	switch {
	case a >= 100:
		prec = 0
	case a >= 10:
		prec = 1
	case a >= 1:
		prec = 2
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// valueRange is the y axis' extent for the samples: it includes 0 when all values are on one
// side of it (as Grafana's soft minimum does), opens a flat line up, and honours the panel's
// fixed min and max.
func valueRange(ss []series, fixedMin, fixedMax *float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.Samples {
			lo, hi = min(lo, p.V), max(hi, p.V)
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	if lo > 0 {
		lo = 0
	}
	if hi < 0 {
		hi = 0
	}
	if fixedMin != nil {
		lo = *fixedMin
	}
	if fixedMax != nil {
		hi = *fixedMax
	}
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

// tickUnit is the step of unit that a value of magnitude a is written in (60 for a minute of
// "s"), so that the axis' ticks can be round in what they show: 10 week, not 16.5 week.
func tickUnit(unit string, a float64) float64 {
	switch unit {
	case "percentunit":
		return 0.01
	case "s", "ms":
		f := 1.0
		if unit == "ms" {
			f = 0.001
		}
		for _, u := range []float64{3.15576e7, 604800, 86400, 3600, 60, 1, 0.001} {
			if a >= u/f || u == 0.001 {
				return u / f
			}
		}
	case "", "short", "none", "reqps", "ops", "bytes":
		base := 1000.0
		if unit == "bytes" {
			base = 1024
		}
		u := 1.0
		for a >= u*base {
			u *= base
		}
		return u
	}
	return 1
}

// niceTicks returns about n tick values on a 1-2-5 step covering [lo, hi], and the range widened
// to the outer ticks.
func niceTicks(lo, hi float64, n int) (ticks []float64, nlo, nhi float64) {
	n = max(n, 2)
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag * 10
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag {
			step = m * mag
			break
		}
	}
	nlo = math.Floor(lo/step+1e-9) * step
	nhi = math.Ceil(hi/step-1e-9) * step
	for i := 0; ; i++ {
		v := nlo + float64(i)*step
		if v > nhi+step/2 {
			break
		}
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ticks = append(ticks, v)
	}
	return ticks, nlo, nhi
}

// timeSteps are the time axis' tick intervals, as Grafana's time axis picks them.
var timeSteps = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour,
}

// timeTicks returns the tick times in [start, end] at the smallest interval that gives no more
// than maxTicks ticks, and the layout to label them with (UTC).
func timeTicks(start, end time.Time, maxTicks int) ([]time.Time, string) {
	maxTicks = max(maxTicks, 1)
	rng := end.Sub(start)
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if rng/s <= time.Duration(maxTicks) {
			step = s
			break
		}
	}
	layout := "15:04"
	switch {
	case step < time.Minute:
		layout = "15:04:05"
	case rng > 24*time.Hour:
		layout = "01/02 15:04"
	}
	var ts []time.Time
	for t := start.UTC().Truncate(step); !t.After(end); t = t.Add(step) {
		if !t.Before(start) {
			ts = append(ts, t)
		}
	}
	return ts, layout
}

// scale maps times and values to the plot's pixels.
type scale struct {
	start, end time.Time
	lo, hi     float64
	x0, y0     float64 // top left corner of the plot area
	w, h       float64
}

func (s scale) x(t time.Time) float64 {
	return s.x0 + s.w*float64(t.Sub(s.start))/float64(s.end.Sub(s.start))
}

func (s scale) y(v float64) float64 {
	return s.y0 + s.h*(1-(v-s.lo)/(s.hi-s.lo))
}

// linePath is the SVG path of a series: one subpath per run of samples no further apart than
// 1.5 steps (a longer gap is drawn as one, as Grafana does when it fills a range query's missing
// steps with nulls), and the samples that stand alone, which get a dot since a subpath of one
// point draws nothing.
func linePath(s scale, samples []sample, step time.Duration) (path string, dots [][2]float64) {
	var b strings.Builder
	run := 0
	flush := func(i int) { // samples[i-run:i] ended a run
		if run == 1 {
			p := samples[i-1]
			dots = append(dots, [2]float64{round1(s.x(p.T)), round1(s.y(p.V))})
		}
	}
	for i, p := range samples {
		cmd := "L"
		if i == 0 || p.T.Sub(samples[i-1].T) > step*3/2 {
			flush(i)
			run = 0
			cmd = "M"
		}
		run++
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s%s,%s", cmd, coord(s.x(p.T)), coord(s.y(p.V)))
	}
	flush(len(samples))
	return b.String(), dots
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

func coord(v float64) string { return strconv.FormatFloat(round1(v), 'f', -1, 64) }

// palette is Grafana's classic series palette, used in series order within a panel.
var palette = []string{
	"#7EB26D", "#EAB839", "#6ED0E0", "#EF843C", "#E24D42", "#1F78C1", "#BA43A9", "#705DA0",
	"#508642", "#CCA300", "#447EBC", "#C15C17", "#890F02", "#0A437C", "#6D1F62", "#584477",
}
