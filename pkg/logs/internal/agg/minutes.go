// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package agg

import (
	"cmp"
	"slices"
)

// A group counts its lines per minute: the current minute in curMinute and curCount, the
// minutes before it in run while the log comes in order, and in the minutes map those that
// come late.

// countMinute counts a line of minute m (Unix time / 60).
func (g *Group[E]) countMinute(m int64) {
	if g.curCount > 0 && m != g.curMinute {
		g.flushMinute()
	}
	g.curMinute = m
	g.curCount++
}

// flushMinute adds the current minute's lines to run, or to minutes when it is not the
// latest minute so far.
func (g *Group[E]) flushMinute() {
	if g.curCount == 0 {
		return
	}
	switch n := len(g.run); {
	case n == 0 || g.run[n-1].Minute < g.curMinute:
		g.run = append(g.run, MinuteCount{g.curMinute, g.curCount})
	case g.run[n-1].Minute == g.curMinute:
		g.run[n-1].Count += g.curCount
	default:
		g.minutes[g.curMinute] += g.curCount
	}
	g.curCount = 0
}

// MinuteCount is a minute (Unix time / 60) and its lines.
type MinuteCount struct {
	Minute int64
	Count  int
}

// Series returns the group's lines per minute in order of minute, all of them in run.
func (g *Group[E]) Series() []MinuteCount {
	g.flushMinute()
	if len(g.minutes) > 0 {
		late := make([]MinuteCount, 0, len(g.minutes))
		for m, c := range g.minutes {
			late = append(late, MinuteCount{m, c})
		}
		slices.SortFunc(late, func(a, b MinuteCount) int { return cmp.Compare(a.Minute, b.Minute) })
		g.run = mergeSeries(g.run, late)
		clear(g.minutes)
	}
	return g.run
}

// mergeSeries merges two series in order of minute, adding up a minute that is in both.
func mergeSeries(a, b []MinuteCount) []MinuteCount {
	out := make([]MinuteCount, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0].Minute < b[0].Minute:
			out, a = append(out, a[0]), a[1:]
		case a[0].Minute > b[0].Minute:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, MinuteCount{a[0].Minute, a[0].Count + b[0].Count}), a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}
