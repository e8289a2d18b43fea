// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"slices"
	"sync"
	"time"
)

// maxTimelineEvents bounds the events a timeline keeps (the oldest go first).
const maxTimelineEvents = 5000

// Timeline records what the HTML report draws: per member, runs of one status (ready, unready,
// down); per rejected trust cell, runs of one cause; and the events. It keeps changes, not
// intervals, so a long watch stays small.
type Timeline struct {
	mu      sync.Mutex
	start   time.Time
	end     time.Time
	prev    time.Time
	members []*lane
	cells   []*lane
	events  []Event
	dropped int
}

// lane is one row of the timeline.
type lane struct {
	Name  string // member, or "signer → verifier"
	Group string // the member a cell row belongs under (its verifier)
	Segs  []seg
}

type seg struct {
	From, To time.Time
	Status   string // ready | unready | down, or the cause of a rejection
	Detail   string
}

// NewTimeline returns an empty timeline.
func NewTimeline() *Timeline { return &Timeline{} }

// Observe adds an interval.
func (t *Timeline) Observe(s *State, events []Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.start.IsZero() {
		t.start = s.Time
	}
	end := s.Time.Add(s.Took)
	for _, m := range s.Members {
		st, detail := "ready", m.Version
		switch {
		case !m.Up:
			st, detail = "down", m.Error
		case !m.Ready:
			st, detail = "unready", "failing: "+joinComma(m.NotReady)
		}
		t.extend(&t.members, m.Name, m.Name, st, detail, s.Time, end)
	}
	for gi, group := range [][]Cell{s.Trust, s.Held} {
		held := gi == 1
		for _, c := range group {
			if c.Accepted || c.unknown() {
				continue
			}
			from := c.Signer
			switch {
			case c.Token != "":
				from = c.Token
			case held:
				from = "held " + c.Signer
			}
			t.extend(&t.cells, from+" → "+c.Verifier, c.Verifier, c.Cause, c.Message, s.Time, end)
		}
	}
	t.prev, t.end = s.Time, end
	t.events = append(t.events, events...)
	if over := len(t.events) - maxTimelineEvents; over > 0 {
		t.events = slices.Delete(t.events, 0, over)
		t.dropped += over
	}
}

// extend continues the lane's last run when it has the same status and reached the previous
// interval, else starts a new run.
func (t *Timeline) extend(lanes *[]*lane, name, group, status, detail string, from, to time.Time) {
	i := slices.IndexFunc(*lanes, func(l *lane) bool { return l.Name == name })
	if i < 0 {
		*lanes = append(*lanes, &lane{Name: name, Group: group})
		i = len(*lanes) - 1
	}
	l := (*lanes)[i]
	if n := len(l.Segs); n > 0 && l.Segs[n-1].Status == status && !l.Segs[n-1].To.Before(t.prev) {
		l.Segs[n-1].To = to
		return
	}
	l.Segs = append(l.Segs, seg{From: from, To: to, Status: status, Detail: detail})
}

func joinComma(v []string) string {
	out := ""
	for i, s := range v {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}
