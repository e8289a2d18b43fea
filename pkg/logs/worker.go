// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"bytes"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/credwatch/credwatch/pkg/logs/cause"
	"github.com/credwatch/credwatch/pkg/logs/internal/quoted"
	"github.com/credwatch/credwatch/pkg/logs/internal/scan"
	"github.com/credwatch/credwatch/pkg/redact"
)

// maxEvidenceLine bounds the length of a line kept as evidence.
const maxEvidenceLine = 4096

// worker classifies blocks; each has its own classifier and aggregator.
type worker struct {
	cl    *cause.Classifier
	gate  *scan.Gate
	agg   *aggregator
	since time.Time
	sc    scan.Scanned

	// The formats this worker has recorded, and the last host seen: the shared format set and
	// the host map are only touched when a line brings something new.
	formats   []string // formats recorded of input formatsOf (a few)
	formatsOf *inputState
	// redactedNames maps host and component names to their redact.Text, in strings of their own.
	redactedNames map[string]redactedName
	hostName      redactedName   // the host last redacted, of a record
	componentName redactedName   // the component last redacted, of a record
	evHost        redactedName   // the same of an event (its own slots: "unknown", "-" or
	evComponent   redactedName   // the catalogue's component alternate with the record's)
	ev            Event          // the event of the line being classified
	scratch       quoted.Scratch // unescaped Docker lines of the block (lent like its bytes)
	clock         minuteClock    // the minute of the last timestamps
	bodies        bodyMemo       // answers for the klog messages read last
	lastHost      string
	lastComponent string
	seenHost      bool
	// matched counts the block's matched lines, added to its input's count when the block is
	// done: an atomic add per line on memory the other workers add to too moved its cache line
	// between CPUs line after line.
	matched int64
	// unfiltered counts the block's matched lines --since kept for want of a usable time.
	unfiltered int64
}

func (w *worker) process(ch chunk) {
	data := ch.data
	st := ch.in
	w.gate.Scan(data, &w.sc)
	if w.sc.NUL {
		st.skipped.Add(int64(countNULLines(data)))
	}
	ends := w.sc.Ends
	starts := w.sc.Starts
	for i, start := range starts {
		if i+prefetchAhead < len(starts) {
			scan.Prefetch(&data[starts[i+prefetchAhead]])
		}
		var end int
		if len(ends) == len(w.sc.Starts) {
			end = ends[i] // the scan found it
		} else if end = bytes.IndexByte(data[start:], '\n'); end < 0 {
			end = len(data)
		} else {
			end += start
		}
		raw := data[start:end]
		if w.sc.NUL && bytes.IndexByte(raw, 0) >= 0 {
			continue // counted as skipped above
		}
		// Relative to the block; fixLineNumbers makes it absolute.
		w.line(st, raw, w.sc.ASCII, int64(w.sc.Lines[i])+1, ch.seq)
	}
	// The block's bytes go back to the pool (or its pages are dropped) once this returns: the
	// evidence still lent from them gets its own copy.
	st.matched.Add(w.matched)
	w.matched = 0
	if w.unfiltered > 0 {
		st.unfiltered.Add(w.unfiltered)
		w.unfiltered = 0
	}
	w.agg.Settle(func(ev *Event) { ev.own(data, ch.prev) })
	w.scratch.Reset()
	w.ev = Event{} // keep no reference to the block (the aggregator has copied what it keeps)
	lines := int64(w.sc.Newlines)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	st.blockDone(ch.seq, lines, ch.extra)
}

// prefetchAhead is how many lines ahead worker.process asks for a line's bytes.
const prefetchAhead = 2

// line classifies one line (ascii: the scan saw no byte of 128 or more in its block, so raw is
// valid UTF-8 without utf8.Valid). text and everything parsed from it borrow raw's bytes (no copy per
// line): whatever outlives the block is copied where it is kept — the classifier's memo and
// caches (cause.Classifier.Classify), the host and component memos here, a group's key, and
// the evidence, at the end of the block (aggregator.Settle).
func (w *worker) line(st *inputState, raw []byte, ascii bool, lineNo int64, seq int) {
	var text string
	if ascii || utf8.Valid(raw) {
		text = unsafe.String(unsafe.SliceData(raw), len(raw))
	} else {
		text = strings.ToValidUTF8(string(raw), "\uFFFD")
	}
	lc := st.lc
	lc.scratch, lc.clock, lc.lazyBody = &w.scratch, &w.clock, true
	ev := &w.ev
	rec := parseRecord(text, lc)
	host, component := w.redacted(rec.Host, &w.hostName), w.redacted(rec.Component, &w.componentName)
	w.see(st, rec.Format, host, component, rec.Host != st.lc.host)
	if rec.lazy {
		if !w.classifyBody(&rec, ev) {
			return
		}
	} else if !classify(w.cl, &rec, ev) {
		return
	}
	if ev.Host == "" {
		ev.Host = "unknown"
	}
	if ev.Component == "" {
		ev.Component = "-"
	}
	ev.Host, ev.Component = w.redacted(ev.Host, &w.evHost), w.redacted(ev.Component, &w.evComponent)
	w.emit(st, ev, text, lineNo, seq)
}

// see notes a line's format, its record's host and component, and whether the record named a
// host of its own.
func (w *worker) see(st *inputState, format, host, component string, ownHost bool) {
	if w.formatsOf != st {
		w.formatsOf, w.formats = st, w.formats[:0]
	}
	if !slices.Contains(w.formats, format) {
		w.formats = append(w.formats, format)
		st.formats.LoadOrStore(format, true)
	}
	if !w.seenHost || host != w.lastHost || component != w.lastComponent {
		w.agg.SeeHost(host, component)
		w.seenHost, w.lastHost, w.lastComponent = true, host, component
	}
	if ownHost && !st.ownHosts.Load() {
		st.ownHosts.Store(true)
	}
}

// emit adds the event of a line to the aggregate, unless it is before --since. A line with no
// time, or one without a year or zone (completed from a guess), is kept and counted: dropping
// it on a guess is how a whole klog file once vanished with "0 failures".
func (w *worker) emit(st *inputState, ev *Event, text string, lineNo int64, seq int) {
	if !w.since.IsZero() {
		if ev.Time.IsZero() || ev.partialTime {
			w.unfiltered++
		} else if ev.Time.Before(w.since) {
			return
		}
	}
	w.matched++
	ev.Input, ev.LineNumber, ev.in, ev.seq = st.Name, lineNo, st, seq
	ev.Line = text // clipped and redacted only when read as evidence (group.evidence)
	ev.lent = true // Line and Audit borrow the block's bytes until aggregator.Settle
	addEvent(w.agg, ev)
}

// evidenceLine is how a line is kept: with any token's signature and private key dropped, then
// clipped.
func evidenceLine(text string) string { return EvidenceLine("", text, maxEvidenceLine) }

// redactEvidence takes secrets out of an event kept as evidence: its line (clipped), text, parts
// and audit fields. Host and component were redacted as the event was read (worker.line).
//
// A line that starts with the rest of a token broken at the end of the line before (Event.cont)
// loses that start, and its text and parts lose it wherever they carry it.
func redactEvidence(ev *Event) {
	text := redact.Text
	if c := ev.cont; c != "" {
		if at := ev.contAt; strings.HasPrefix(ev.Line[min(at, len(ev.Line)):], c) {
			ev.Line = ev.Line[:at] + redact.Marker + ev.Line[at+len(c):]
		}
		if utf8.RuneCountInString(c) >= redact.MinSecretLen {
			text = func(s string) string { return redact.Secret(redact.Text(s), c) }
		}
		ev.cont, ev.contAt = "", 0
	}
	ev.Line = evidenceLine(ev.Line)
	ev.Text = text(ev.Text)
	if len(ev.Parts) > 0 {
		parts := make([]Part, len(ev.Parts))
		for i, p := range ev.Parts {
			p.Text = text(p.Text)
			parts[i] = p
		}
		ev.Parts = parts
	}
	if ev.Audit != nil {
		a := *ev.Audit
		a.URI, a.UserAgent, a.User = text(a.URI), text(a.UserAgent), text(a.User)
		ev.Audit = &a
	}
}

// maxRedacted bounds worker.redactedNames.
const maxRedacted = 1024

// redacted is redact.Text(s) in a string of its own (s may borrow a block's bytes), remembered
// for the host and component names that recur on every line; last is the name last asked
// about in the same role.
func (w *worker) redacted(s string, last *redactedName) string {
	if s == last.in {
		return last.out
	}
	if n, ok := w.redactedNames[s]; ok {
		*last = n
		return n.out
	}
	own := strings.Clone(s)
	n := redactedName{own, redact.Text(own)}
	if w.redactedNames == nil {
		w.redactedNames = map[string]redactedName{}
	}
	if len(w.redactedNames) < maxRedacted {
		w.redactedNames[own] = n
	}
	*last = n
	return n.out
}

// redactedName is a name and its redact.Text, both strings of their own.
type redactedName struct{ in, out string }

// countNULLines counts the lines of data that contain a NUL byte (binary garbage).
func countNULLines(data []byte) int {
	n := 0
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], 0)
		if j < 0 {
			break
		}
		n++
		nl := bytes.IndexByte(data[i+j:], '\n')
		if nl < 0 {
			break
		}
		i += j + nl + 1
	}
	return n
}
