package logs

import (
	"cmp"
	"slices"
)

// A group counts its lines per minute: the current minute in curMinute and curCount, the
// minutes before it in run while the log comes in order, and in the minutes map those that
// come late.

// countMinute counts a line of minute m (Unix time / 60).
func (g *group) countMinute(m int64) {
	if g.curCount > 0 && m != g.curMinute {
		g.flushMinute()
	}
	g.curMinute = m
	g.curCount++
}

// flushMinute adds the current minute's lines to run, or to minutes when it is not the
// latest minute so far.
func (g *group) flushMinute() {
	if g.curCount == 0 {
		return
	}
	switch n := len(g.run); {
	case n == 0 || g.run[n-1].minute < g.curMinute:
		g.run = append(g.run, minuteCount{g.curMinute, g.curCount})
	case g.run[n-1].minute == g.curMinute:
		g.run[n-1].count += g.curCount
	default:
		g.minutes[g.curMinute] += g.curCount
	}
	g.curCount = 0
}

// minuteCount is a minute (Unix time / 60) and its lines.
type minuteCount struct {
	minute int64
	count  int
}

// series returns the group's lines per minute in order of minute, all of them in run.
func (g *group) series() []minuteCount {
	g.flushMinute()
	if len(g.minutes) > 0 {
		late := make([]minuteCount, 0, len(g.minutes))
		for m, c := range g.minutes {
			late = append(late, minuteCount{m, c})
		}
		slices.SortFunc(late, func(a, b minuteCount) int { return cmp.Compare(a.minute, b.minute) })
		g.run = mergeSeries(g.run, late)
		clear(g.minutes)
	}
	return g.run
}

// mergeSeries merges two series in order of minute, adding up a minute that is in both.
func mergeSeries(a, b []minuteCount) []minuteCount {
	out := make([]minuteCount, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0].minute < b[0].minute:
			out, a = append(out, a[0]), a[1:]
		case a[0].minute > b[0].minute:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, minuteCount{a[0].minute, a[0].count + b[0].count}), a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}
