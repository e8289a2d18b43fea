package logs

import (
	"slices"
	"sort"
	"strings"
	"time"
	"unsafe"
)

type groupKey struct{ host, component, cause, client string }

// group aggregates the events of one host, component and cause.
type group struct {
	key     groupKey
	kind    string
	count   int
	first   time.Time
	last    time.Time
	minutes map[int64]int // lines per minute (with run: series)
	run     []minuteCount // lines per minute after those in minutes, ascending (a log in order)
	head    []Event       // earliest evidence
	tail    []Event       // latest evidence: a ring from tailAt on once it holds its n (latest)
	tailAt  int
	texts   map[string]int
	parts   map[string]int
	lent    bool // in aggregator.lent: its evidence may borrow a block's bytes
	// curMinute has curCount lines not yet in minutes (flushMinute): a log in order adds to
	// one minute after another.
	curMinute int64
	curCount  int
}

const maxTexts = 100

// aggregator is one worker's (or the merged) state. It holds no raw lines beyond the bounded
// evidence of each group.
type aggregator struct {
	evidence int
	groups   map[groupKey]*group
	lent     []*group                   // groups whose evidence may borrow the current block's bytes (settle)
	recent   [recentGroups]*group       // groups by groupKey.slot, looked at before the map
	hosts    map[string]map[string]bool // host -> components seen on it ("" when unknown)
}

func newAggregator(evidence int) *aggregator {
	return &aggregator{evidence: evidence, groups: map[groupKey]*group{}, hosts: map[string]map[string]bool{}}
}

func (a *aggregator) add(ev *Event) {
	k := groupKey{ev.Host, ev.Component, ev.Cause, ""}
	if ev.Cause == CauseClient {
		k.client = clientOf(ev.Audit)
	}
	g := a.recentGroup(k)
	if g == nil {
		k.client = strings.Clone(k.client) // the access log's agent borrows the line (worker.line)
		g = &group{key: k, kind: ev.Kind, minutes: map[int64]int{}}
		a.groups[k] = g
		a.recent[k.slot()] = g
	}
	g.count++
	if !ev.Time.IsZero() {
		if g.first.IsZero() || ev.Time.Before(g.first) {
			g.first = ev.Time
		}
		if ev.Time.After(g.last) {
			g.last = ev.Time
		}
		g.countMinute(ev.Time.Unix() / 60)
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
	if ev.lent && !g.lent {
		g.lent = true
		a.lent = append(a.lent, g)
	}
}

// recentGroup is groups[k], looking first at the group last found in k's slot.
func (a *aggregator) recentGroup(k groupKey) *group {
	slot := k.slot()
	if g := a.recent[slot]; g != nil && g.key == k {
		return g
	}
	g := a.groups[k]
	if g != nil {
		a.recent[slot] = g
	}
	return g
}

// slot picks k's slot of aggregator.recent from where its strings are: a worker's host and
// component names and the catalogue's cause IDs are the same strings line after line
// (worker.redacted), so this is no hash of their text. Equal keys in other strings only miss.
func (k *groupKey) slot() int {
	h := uintptr(unsafe.Pointer(unsafe.StringData(k.host)))>>3 ^ uintptr(unsafe.Pointer(unsafe.StringData(k.component)))>>5 ^
		uintptr(unsafe.Pointer(unsafe.StringData(k.cause)))>>4 ^ uintptr(len(k.client))
	return int((h ^ h>>7 ^ h>>13) % recentGroups)
}

// recentGroups is the size of aggregator.recent.
const recentGroups = 64

// settle gives the evidence of the groups added to since the last settle its own copies of
// the strings that borrow block's bytes (Event.own), after noting what of each line finishes a
// token broken at the end of the line before it (continued), while block is there to tell.
func (a *aggregator) settle(block []byte) {
	for _, g := range a.lent {
		for i := range g.head {
			g.head[i].own(block)
		}
		for i := range g.tail {
			g.tail[i].own(block)
		}
		g.lent = false
		g.flushMinute()
	}
	clear(a.lent)
	a.lent = a.lent[:0]
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

// keep retains ev as evidence if it is among the n earliest or n latest of the group. Lines
// are clipped and redacted only when evidence is read (group.evidence).
func (g *group) keep(ev *Event, n int) {
	if n <= 0 {
		return
	}
	half := (n + 1) / 2
	if len(g.head) < half || earlier(ev, &g.head[len(g.head)-1]) {
		g.head = insertSorted(g.head, ev, half)
	}
	if tn := n - half; tn > 0 && (len(g.tail) < tn || earlier(&g.tail[g.tailAt], ev)) {
		if len(g.tail) == tn && !earlier(ev, &g.tail[(g.tailAt+tn-1)%tn]) {
			// The common case, a log read in order: the latest so far replaces the earliest,
			// and the ring turns.
			g.tail[g.tailAt] = *ev
			if g.tailAt++; g.tailAt == tn {
				g.tailAt = 0
			}
			return
		}
		g.tail = insertSorted(g.latest(), ev, tn+1)
		if len(g.tail) > tn {
			g.tail = append(g.tail[:0], g.tail[1:]...) // drop the earliest
		}
	}
}

// latest returns the tail in order, earliest first (turning the ring back to start at 0).
func (g *group) latest() []Event {
	if g.tailAt != 0 {
		slices.Reverse(g.tail[:g.tailAt])
		slices.Reverse(g.tail[g.tailAt:])
		slices.Reverse(g.tail)
		g.tailAt = 0
	}
	return g.tail
}

// insertSorted inserts ev into list (sorted by earlier), keeping at most n: the earliest.
func insertSorted(list []Event, ev *Event, n int) []Event {
	i := len(list)
	for i > 0 && earlier(ev, &list[i-1]) {
		i--
	}
	if i >= n {
		return list
	}
	if len(list) < n {
		list = append(list, Event{})
	}
	copy(list[i+1:], list[i:len(list)-1])
	list[i] = *ev
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
		ga.flushMinute()
		gb.flushMinute()
		ga.count += gb.count
		if !gb.first.IsZero() && (ga.first.IsZero() || gb.first.Before(ga.first)) {
			ga.first = gb.first
		}
		if gb.last.After(ga.last) {
			ga.last = gb.last
		}
		ga.run = mergeSeries(ga.series(), gb.series())
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
			ga.keep(&ev, a.evidence)
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
		redactEvidence(&ev)
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
