// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package agg

import (
	"slices"
	"sort"
	"strings"
	"time"
	"unsafe"
)

// Key names a group: a host, a component, a cause (or context event) and, for the 401s the
// access log tells of, the client.
type Key struct{ Host, Component, Cause, Client string }

// Group aggregates the lines of one Key: E is the caller's event, kept as evidence.
type Group[E any] struct {
	Key     Key
	Kind    string // the first line's kind: "cause" or "event"
	Count   int
	First   time.Time      // the earliest time of a line that had one
	Last    time.Time      // the latest
	Texts   map[string]int // texts counted verbatim (CountText), at most maxTexts
	Related map[string]int // other causes named in the lines (Relate)

	minutes map[int64]int // lines per minute (with run: Series)
	run     []MinuteCount // lines per minute after those in minutes, ascending (a log in order)
	head    []E           // earliest evidence
	tail    []E           // latest evidence: a ring from tailAt on once it holds its n (latest)
	tailAt  int
	lent    bool // in Aggregator.lent: its evidence may borrow a block's bytes
	// curMinute has curCount lines not yet in minutes (flushMinute): a log in order adds to
	// one minute after another.
	curMinute int64
	curCount  int
}

const maxTexts = 100

// Aggregator is one worker's (or the merged) aggregate of events E. It holds no raw lines
// beyond the bounded evidence of each group.
type Aggregator[E any] struct {
	evidence int
	earlier  func(a, b *E) bool // the order of evidence: by time, then input and line
	view     func(sorted []E) []E
	groups   map[Key]*Group[E]
	lent     []*Group[E]                // groups whose evidence may borrow the current block's bytes (Settle)
	recent   [recentGroups]*Group[E]    // groups by Key.slot, looked at before the map
	hosts    map[string]map[string]bool // host -> components seen on it ("" when unknown)
}

// New is an empty aggregate that keeps the evidence earliest and latest events of each group
// in the order of earlier; view turns a group's kept events, sorted, into its evidence (the
// caller drops duplicates and redacts there).
func New[E any](evidence int, earlier func(a, b *E) bool, view func(sorted []E) []E) *Aggregator[E] {
	return &Aggregator[E]{evidence: evidence, earlier: earlier, view: view, groups: map[Key]*Group[E]{},
		hosts: map[string]map[string]bool{}}
}

// Add counts a line of group k, of kind, at t (zero: no time), and keeps ev as evidence if it is
// among the group's earliest or latest; lent says ev borrows a block's bytes until Settle. It
// returns the group, for CountText and Relate.
func (a *Aggregator[E]) Add(k Key, kind string, t time.Time, ev *E, lent bool) *Group[E] {
	g := a.recentGroup(k)
	if g == nil {
		k.Client = strings.Clone(k.Client) // the access log's agent borrows the line
		g = &Group[E]{Key: k, Kind: kind, minutes: map[int64]int{}}
		a.groups[k] = g
		a.recent[k.slot()] = g
	}
	g.Count++
	if !t.IsZero() {
		if g.First.IsZero() || t.Before(g.First) {
			g.First = t
		}
		if t.After(g.Last) {
			g.Last = t
		}
		g.countMinute(t.Unix() / 60)
	}
	a.keep(g, ev)
	if lent && !g.lent {
		g.lent = true
		a.lent = append(a.lent, g)
	}
	return g
}

// CountText counts a line's text verbatim (an unknown cause's), up to maxTexts texts.
func (g *Group[E]) CountText(text string) {
	if g.Texts == nil {
		g.Texts = map[string]int{}
	}
	if _, ok := g.Texts[text]; ok || len(g.Texts) < maxTexts {
		g.Texts[text]++
	}
}

// Relate counts another cause a line names (a part of an aggregate error).
func (g *Group[E]) Relate(cause string) {
	if g.Related == nil {
		g.Related = map[string]int{}
	}
	g.Related[cause]++
}

// recentGroup is groups[k], looking first at the group last found in k's slot.
func (a *Aggregator[E]) recentGroup(k Key) *Group[E] {
	slot := k.slot()
	if g := a.recent[slot]; g != nil && g.Key == k {
		return g
	}
	g := a.groups[k]
	if g != nil {
		a.recent[slot] = g
	}
	return g
}

// slot picks k's slot of Aggregator.recent from where its strings are: a worker's host and
// component names and the catalogue's cause IDs are the same strings line after line, so this
// is no hash of their text. Equal keys in other strings only miss.
func (k *Key) slot() int {
	h := uintptr(unsafe.Pointer(unsafe.StringData(k.Host)))>>3 ^ uintptr(unsafe.Pointer(unsafe.StringData(k.Component)))>>5 ^
		uintptr(unsafe.Pointer(unsafe.StringData(k.Cause)))>>4 ^ uintptr(len(k.Client))
	return int((h ^ h>>7 ^ h>>13) % recentGroups)
}

// recentGroups is the size of Aggregator.recent.
const recentGroups = 64

// Settle calls own on the evidence of the groups added to since the last Settle, which may
// borrow the bytes of the block just done: own gives an event its own copies.
func (a *Aggregator[E]) Settle(own func(*E)) {
	for _, g := range a.lent {
		g.each(own)
		g.lent = false
		g.flushMinute()
	}
	clear(a.lent)
	a.lent = a.lent[:0]
}

// keep retains ev as evidence if it is among the n earliest or n latest of the group. Lines
// are clipped and redacted only when evidence is read (Evidence).
func (a *Aggregator[E]) keep(g *Group[E], ev *E) {
	n, earlier := a.evidence, a.earlier
	if n <= 0 {
		return
	}
	half := (n + 1) / 2
	if len(g.head) < half || earlier(ev, &g.head[len(g.head)-1]) {
		g.head = insertSorted(g.head, ev, half, earlier)
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
		g.tail = insertSorted(g.latest(), ev, tn+1, earlier)
		if len(g.tail) > tn {
			g.tail = append(g.tail[:0], g.tail[1:]...) // drop the earliest
		}
	}
}

// latest returns the tail in order, earliest first (turning the ring back to start at 0).
func (g *Group[E]) latest() []E {
	if g.tailAt != 0 {
		slices.Reverse(g.tail[:g.tailAt])
		slices.Reverse(g.tail[g.tailAt:])
		slices.Reverse(g.tail)
		g.tailAt = 0
	}
	return g.tail
}

// insertSorted inserts ev into list (sorted by earlier), keeping at most n: the earliest.
func insertSorted[E any](list []E, ev *E, n int, earlier func(a, b *E) bool) []E {
	i := len(list)
	for i > 0 && earlier(ev, &list[i-1]) {
		i--
	}
	if i >= n {
		return list
	}
	if len(list) < n {
		var zero E
		list = append(list, zero)
	}
	copy(list[i+1:], list[i:len(list)-1])
	list[i] = *ev
	return list
}

// Merge folds b into a.
func (a *Aggregator[E]) Merge(b *Aggregator[E]) {
	for h, cs := range b.hosts {
		for c := range cs {
			a.SeeHost(h, c)
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
		ga.Count += gb.Count
		if !gb.First.IsZero() && (ga.First.IsZero() || gb.First.Before(ga.First)) {
			ga.First = gb.First
		}
		if gb.Last.After(ga.Last) {
			ga.Last = gb.Last
		}
		ga.run = mergeSeries(ga.Series(), gb.Series())
		for t, c := range gb.Texts {
			if ga.Texts == nil {
				ga.Texts = map[string]int{}
			}
			if _, ok := ga.Texts[t]; ok || len(ga.Texts) < maxTexts {
				ga.Texts[t] += c
			}
		}
		for p, c := range gb.Related {
			if ga.Related == nil {
				ga.Related = map[string]int{}
			}
			ga.Related[p] += c
		}
		for _, ev := range b.Evidence(gb) {
			a.keep(ga, &ev)
		}
	}
}

// Evidence returns the kept events of g, earliest first, as the aggregate's view shows them.
func (a *Aggregator[E]) Evidence(g *Group[E]) []E {
	all := append(append([]E(nil), g.head...), g.tail...)
	sort.SliceStable(all, func(i, j int) bool { return a.earlier(&all[i], &all[j]) })
	return a.view(all)
}

// Kept calls fix on every event kept as evidence, as it is kept (line numbers made absolute once
// every block is counted, say).
func (a *Aggregator[E]) Kept(fix func(*E)) {
	for _, g := range a.groups {
		g.each(fix)
	}
}

// each calls f on every event g keeps.
func (g *Group[E]) each(f func(*E)) {
	for i := range g.head {
		f(&g.head[i])
	}
	for i := range g.tail {
		f(&g.tail[i])
	}
}

// Groups are the groups, in no order.
func (a *Aggregator[E]) Groups() map[Key]*Group[E] { return a.groups }

// Hosts maps each host seen to the components seen on it ("" when unknown).
func (a *Aggregator[E]) Hosts() map[string]map[string]bool { return a.hosts }

// SeeHost records that host has lines of component.
func (a *Aggregator[E]) SeeHost(host, component string) {
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
