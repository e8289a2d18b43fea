// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package agg

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// event is a test's event: a time and a line.
type event struct {
	Time       time.Time
	LineNumber int64
}

// earlier is pkg/logs's order of evidence (by time, then input and line) for one input.
func earlier(a, b *event) bool {
	return a.Time.Before(b.Time) || a.Time.Equal(b.Time) && a.LineNumber < b.LineNumber
}

// TestKeepEarliestAndLatest checks that a group keeps exactly the earliest and latest events,
// whether they come in order (the fast path), reversed or shuffled.
func TestKeepEarliestAndLatest(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	all := make([]event, 40)
	for i := range all {
		all[i] = event{Time: base.Add(time.Duration(i/3) * time.Second), LineNumber: int64(i + 1)}
	}
	r := rand.New(rand.NewPCG(1, 2))
	orders := map[string][]event{"in order": slices.Clone(all), "reversed": slices.Clone(all)}
	slices.Reverse(orders["reversed"])
	shuffled := slices.Clone(all)
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	orders["shuffled"] = shuffled
	// In order but for a few late and early lines: the ring turns, then takes an insertion.
	mostly := slices.Clone(all)
	mostly[30], mostly[35] = mostly[35], mostly[30]
	mostly[2], mostly[20] = mostly[20], mostly[2]
	mostly[37], mostly[39] = mostly[39], mostly[37]
	orders["mostly in order"] = mostly
	for _, n := range []int{1, 2, 5, 6} {
		half := (n + 1) / 2
		for name, evs := range orders {
			a, g := New(n, earlier, func(s []event) []event { return s }), &Group[event]{}
			for i := range evs {
				a.keep(g, &evs[i])
			}
			lines := func(es []event) (out []int64) {
				for _, e := range es {
					out = append(out, e.LineNumber)
				}
				return out
			}
			wantHead, wantTail := lines(all[:half]), lines(all[len(all)-(n-half):])
			if got := lines(g.head); !slices.Equal(got, wantHead) {
				t.Errorf("n=%d %s: head %v, want %v", n, name, got, wantHead)
			}
			if got := lines(g.latest()); !slices.Equal(got, wantTail) {
				t.Errorf("n=%d %s: tail %v, want %v", n, name, got, wantTail)
			}
		}
	}
}

// TestMinuteCounts checks a group's lines per minute whatever order the minutes come in, also
// when two workers' groups are merged.
func TestMinuteCounts(t *testing.T) {
	t.Parallel()
	for _, seq := range [][]int64{{}, {5}, {5, 5, 6, 6, 6, 7}, {5, 5, 6, 4, 6, 7, 3, 7, 7, 2, 8}, {9, 8, 7, 7, 9, 10}} {
		for split := 0; split <= len(seq); split++ {
			ga, gb := &Group[event]{minutes: map[int64]int{}}, &Group[event]{minutes: map[int64]int{}}
			want := map[int64]int{}
			for i, m := range seq {
				g := ga
				if i >= split {
					g = gb
				}
				g.countMinute(m)
				want[m]++
				if i == 3 {
					g.flushMinute() // a block's end
				}
			}
			got := map[int64]int{}
			prev := int64(-1 << 62)
			for _, mc := range mergeSeries(ga.Series(), gb.Series()) {
				if mc.Minute <= prev {
					t.Errorf("%v split at %d: minute %d after %d", seq, split, mc.Minute, prev)
				}
				got[mc.Minute], prev = mc.Count, mc.Minute
			}
			if !maps.Equal(got, want) {
				t.Errorf("%v split at %d: %v, want %v", seq, split, got, want)
			}
		}
	}
}
