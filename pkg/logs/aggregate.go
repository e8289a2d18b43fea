package logs

import (
	"sort"
	"time"
)

type groupKey struct{ host, component, cause string }

// group aggregates the events of one host, component and cause.
type group struct {
	key     groupKey
	kind    string
	count   int
	first   time.Time
	last    time.Time
	minutes map[int64]int
	head    []Event // earliest evidence
	tail    []Event // latest evidence
	texts   map[string]int
	parts   map[string]int
}

const maxTexts = 100

// aggregator is one worker's (or the merged) state. It holds no raw lines beyond the bounded
// evidence of each group.
type aggregator struct {
	evidence int
	groups   map[groupKey]*group
	hosts    map[string]map[string]bool // host -> components seen on it ("" when unknown)
}

func newAggregator(evidence int) *aggregator {
	return &aggregator{evidence: evidence, groups: map[groupKey]*group{}, hosts: map[string]map[string]bool{}}
}

func (a *aggregator) add(ev Event) {
	k := groupKey{ev.Host, ev.Component, ev.Cause}
	g := a.groups[k]
	if g == nil {
		g = &group{key: k, kind: ev.Kind, minutes: map[int64]int{}}
		a.groups[k] = g
	}
	g.count++
	if !ev.Time.IsZero() {
		if g.first.IsZero() || ev.Time.Before(g.first) {
			g.first = ev.Time
		}
		if ev.Time.After(g.last) {
			g.last = ev.Time
		}
		g.minutes[ev.Time.Unix()/60]++
	}
	if ev.Cause == CauseUnknown {
		if g.texts == nil {
			g.texts = map[string]int{}
		}
		if _, ok := g.texts[ev.Text]; ok || len(g.texts) < maxTexts {
			g.texts[ev.Text]++
		}
	}
	for _, p := range ev.Parts {
		if p.Cause != "" && p.Cause != ev.Cause {
			if g.parts == nil {
				g.parts = map[string]int{}
			}
			g.parts[p.Cause]++
		}
	}
	g.keep(ev, a.evidence)
}

// order compares events by time, then input and line.
func earlier(a, b *Event) bool {
	if !a.Time.Equal(b.Time) {
		return a.Time.Before(b.Time)
	}
	if a.Input != b.Input {
		return a.Input < b.Input
	}
	return a.LineNumber < b.LineNumber
}

// keep retains ev as evidence if it is among the n earliest or n latest of the group.
func (g *group) keep(ev Event, n int) {
	if n <= 0 {
		return
	}
	half := (n + 1) / 2
	inHead := len(g.head) < half || earlier(&ev, &g.head[len(g.head)-1])
	inTail := n-half > 0 && (len(g.tail) < n-half || earlier(&g.tail[len(g.tail)-1], &ev))
	if !inHead && !inTail {
		return
	}
	if !ev.kept {
		ev.Line, ev.kept = evidenceLine(ev.Line), true
	}
	if inHead {
		g.head = insertBounded(g.head, ev, half, func(a, b *Event) bool { return earlier(a, b) })
	}
	if inTail {
		g.tail = insertBounded(g.tail, ev, n-half, func(a, b *Event) bool { return earlier(b, a) })
	}
}

// insertBounded keeps list sorted by less and at most n long.
func insertBounded(list []Event, ev Event, n int, less func(a, b *Event) bool) []Event {
	if n <= 0 {
		return list
	}
	if len(list) == n && !less(&ev, &list[n-1]) {
		return list
	}
	i := sort.Search(len(list), func(i int) bool { return less(&ev, &list[i]) })
	if len(list) < n {
		list = append(list, Event{})
	}
	copy(list[i+1:], list[i:len(list)-1])
	list[i] = ev
	return list
}

// merge folds b into a.
func (a *aggregator) merge(b *aggregator) {
	for h, cs := range b.hosts {
		for c := range cs {
			a.seeHost(h, c)
		}
	}
	for k, gb := range b.groups {
		ga := a.groups[k]
		if ga == nil {
			a.groups[k] = gb
			continue
		}
		ga.count += gb.count
		if !gb.first.IsZero() && (ga.first.IsZero() || gb.first.Before(ga.first)) {
			ga.first = gb.first
		}
		if gb.last.After(ga.last) {
			ga.last = gb.last
		}
		for m, c := range gb.minutes {
			ga.minutes[m] += c
		}
		for t, c := range gb.texts {
			if ga.texts == nil {
				ga.texts = map[string]int{}
			}
			if _, ok := ga.texts[t]; ok || len(ga.texts) < maxTexts {
				ga.texts[t] += c
			}
		}
		for p, c := range gb.parts {
			if ga.parts == nil {
				ga.parts = map[string]int{}
			}
			ga.parts[p] += c
		}
		for _, ev := range gb.evidence() {
			ga.keep(ev, a.evidence)
		}
	}
}

// evidence returns the group's kept lines, earliest first, without duplicates.
func (g *group) evidence() []Event {
	all := append(append([]Event(nil), g.head...), g.tail...)
	sort.SliceStable(all, func(i, j int) bool { return earlier(&all[i], &all[j]) })
	out := all[:0]
	for i, ev := range all {
		if i > 0 && ev.Input == all[i-1].Input && ev.LineNumber == all[i-1].LineNumber && ev.Line == all[i-1].Line {
			continue
		}
		out = append(out, ev)
	}
	return out
}

// seeHost records that host has lines of component.
func (a *aggregator) seeHost(host, component string) {
	if host == "" {
		return
	}
	cs := a.hosts[host]
	if cs == nil {
		cs = map[string]bool{}
		a.hosts[host] = cs
	}
	cs[component] = true
}
