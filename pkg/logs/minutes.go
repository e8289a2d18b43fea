package logs

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

// minuteMap returns the group's lines per minute, all of them in minutes.
func (g *group) minuteMap() map[int64]int {
	g.flushMinute()
	for _, r := range g.run {
		g.minutes[r.minute] += r.count
	}
	g.run = g.run[:0]
	return g.minutes
}
