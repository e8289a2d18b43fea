package logs

import (
	"strings"
	"time"
	"unsafe"

	"github.com/credwatch/credwatch/pkg/logs/envelope"
)

// A worker's line memo remembers lines it parsed and classified in full, and where in them
// parseRecord read a time: a later line with the same bytes around its times (an incident's log
// repeats a few messages from a few hosts thousands of times) gets the remembered record and
// event without being parsed or classified again. Its times are read by the same parsers, at the
// same places, in the same order as parseRecord reads them, and the line falls back to the full
// path when one of them refuses it. Only the formats whose times are all recorded are remembered:
// klog text, bare or in CRI, Docker json-file and kubectl prefixes, and flat JSON lines whose
// "ts" flatMemo reads. TestLineMemo and FuzzLineMemo compare it with the full path.

// tokenKind is a parser that read a time.
type tokenKind uint8

const (
	criTime    tokenKind = iota + 1 // parseCRI at the token: an RFC 3339 time up to a space
	klogTime                        // envelope.KlogHeader at the token: its severity letter, then the time
	dockerTime                      // a Docker line's "time" value, up to its quote
	flatTs                          // a flat JSON line's "ts" number (flatMemo)
)

// timeToken is where a parser read a time: off is in the line.
type timeToken struct {
	kind tokenKind
	off  int
}

// maxTokens bounds the times of a remembered line.
const maxTokens = 4

// tokenRecorder collects, while parseRecord reads a line, where it read times. A nil recorder
// records nothing.
type tokenRecorder struct {
	base string // the line
	// alias is a Docker line's "log" value unescaped into scratch space; its first aliasSafe
	// bytes are the line's own bytes from aliasOff on (no escape before them).
	alias     string
	aliasOff  int
	aliasSafe int
	toks      [maxTokens]timeToken
	n         int
	bad       bool // a time was read where the line's bytes are not
}

func (r *tokenRecorder) reset(base string) {
	*r = tokenRecorder{base: base}
}

// add records that a parser of kind read a time at the start of at.
func (r *tokenRecorder) add(kind tokenKind, at string) {
	if r == nil || r.bad {
		return
	}
	off, ok := within(r.base, at)
	if !ok {
		// A klog header at the start of a Docker value: its time is before the first escape.
		// The byte after the token must be the line's own too: an escape there (\u0039) would
		// be read as one more digit of the fraction in the unescaped value.
		if a, inAlias := within(r.alias, at); inAlias && kind == klogTime && a+klogTokenMax < r.aliasSafe {
			off, ok = r.aliasOff+a, true
		}
	}
	if !ok || r.n == maxTokens {
		r.bad = true
		return
	}
	r.toks[r.n] = timeToken{kind, off}
	r.n++
}

// markBad records that a time was read where the recorder did not see it.
func (r *tokenRecorder) markBad() {
	if r != nil {
		r.bad = true
	}
}

// setAlias records that value, a Docker line's "log" value, was unescaped from raw (a part of
// the line).
func (r *tokenRecorder) setAlias(value, raw string) {
	if r == nil {
		return
	}
	r.alias, r.aliasSafe = "", 0
	off, ok := within(r.base, raw)
	if !ok {
		return
	}
	safe := strings.IndexByte(raw, '\\')
	if safe < 0 {
		safe = len(raw)
	}
	r.alias, r.aliasOff, r.aliasSafe = value, off, min(safe, len(value))
}

// klogTokenMax bounds the bytes of a klog token: its severity letter, "MMDD hh:mm:ss", and a
// fraction of at most 18 digits (more are compared as the line's other bytes).
const klogTokenMax = 1 + 13 + 1 + 18

// within is sub's offset in s when sub is a part of s's bytes.
func within(s, sub string) (int, bool) {
	if len(s) == 0 || len(sub) == 0 {
		return 0, false
	}
	b, p := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(sub)))
	if p < b || p+uintptr(len(sub)) > b+uintptr(len(s)) {
		return 0, false
	}
	return int(p - b), true
}

// tokenStart is where the variable bytes of a token at off start: a klog token's severity
// letter is compared as the line's other bytes.
func tokenStart(kind tokenKind, off int) int {
	if kind == klogTime {
		return off + 1
	}
	return off
}

// tokenEnd is where the variable bytes of a token that start at line[start:] end, or -1.
func tokenEnd(kind tokenKind, line string, start int) int {
	s := line[start:]
	switch kind {
	case criTime:
		if i := strings.IndexByte(s, ' '); i > 0 {
			return start + i
		}
	case dockerTime:
		if i := strings.IndexByte(s, '"'); i > 0 {
			return start + i
		}
	case flatTs:
		i := 0
		for i < len(s) && isNumberByte(s[i]) {
			i++
		}
		if i > 0 {
			return start + i
		}
	case klogTime:
		if len(s) < 13 {
			return -1
		}
		i := 13 // "MMDD hh:mm:ss"
		if i < len(s) && s[i] == '.' {
			for i++; i < len(s) && i < klogTokenMax-1 && s[i] >= '0' && s[i] <= '9'; i++ {
			}
		}
		return start + i
	}
	return -1
}

// memoLine is a remembered line.
type memoLine struct {
	st        *inputState
	line      string
	toks      []timeToken // in the order parseRecord read them
	byOff     []int       // indexes of toks by offset
	format    string
	host      string // redacted, as worker.line keeps them
	component string
	ownHost   bool // the record named a host other than the input's
	ev        Event
}

// lineMemo is a worker's remembered lines.
type lineMemo struct {
	slots   [lineMemoSlots][2]*memoLine
	rec     tokenRecorder
	misses  int  // in a row
	resting int  // lines left to read without the memo
	off     bool // never used (Config.noLineMemo)
}

const (
	lineMemoSlots = 256
	lineMemoMiss  = 64   // after this many misses in a row, lines are read without the memo ...
	lineMemoRest  = 4096 // ... for this many lines (a log whose lines never repeat)
)

func lineSlot(line string) int {
	return (len(line)*31 + int(line[0])) % lineMemoSlots
}

// recorder returns the recorder for a full parse of line, or nil while the memo rests.
func (m *lineMemo) recorder(line string) *tokenRecorder {
	if m.off || m.resting > 0 || line == "" {
		return nil
	}
	m.rec.reset(line)
	return &m.rec
}

// lookup returns the event of line if a remembered line of input st matches it: ev has its
// times, the rest is the remembered line's.
func (m *lineMemo) lookup(st *inputState, line string, lc lineContext) (*memoLine, time.Time, bool) {
	if m.resting > 0 {
		m.resting--
		return nil, time.Time{}, false
	}
	if m.off || line == "" {
		return nil, time.Time{}, false
	}
	for _, e := range m.slots[lineSlot(line)] {
		if e == nil || e.st != st {
			continue
		}
		if t, ok := e.match(line, lc); ok {
			m.misses = 0
			return e, t, true
		}
	}
	if m.misses++; m.misses >= lineMemoMiss {
		m.misses, m.resting = 0, lineMemoRest
	}
	return nil, time.Time{}, false
}

// match reads line's times if line is e.line but for them.
func (e *memoLine) match(line string, lc lineContext) (time.Time, bool) {
	var offs [maxTokens]int // the tokens' offsets in line
	pe, pl := 0, 0          // where the last compared token ends in e.line and in line
	for _, i := range e.byOff {
		tk := e.toks[i]
		start := tokenStart(tk.kind, tk.off)
		n := start - pe // constant bytes before the token
		if pl+n > len(line) || line[pl:pl+n] != e.line[pe:start] {
			return time.Time{}, false
		}
		offs[i] = tk.off - pe + pl
		endL, endE := tokenEnd(tk.kind, line, pl+n), tokenEnd(tk.kind, e.line, start)
		if endL < 0 || endE < 0 {
			return time.Time{}, false
		}
		pe, pl = endE, endL
	}
	if line[pl:] != e.line[pe:] {
		return time.Time{}, false
	}
	// The times, as parseRecord reads them.
	var env time.Time
	for i, tk := range e.toks {
		at := line[offs[i]:]
		switch tk.kind {
		case criTime:
			_, t, ok := parseCRI(at, lc.clock)
			if !ok {
				return time.Time{}, false
			}
			env = firstTime(env, t)
		case dockerTime:
			end := strings.IndexByte(at, '"')
			if end < 0 {
				return time.Time{}, false
			}
			// A time the reader refuses may be one the full path reads after unescaping it or
			// stripping colour sequences: the full path decides.
			t, err := lc.clock.rfc3339(at[:end])
			if err != nil || t.IsZero() {
				return time.Time{}, false
			}
			if env.IsZero() {
				env = t
			}
		case flatTs:
			end := tokenEnd(flatTs, at, 0)
			if end < 0 {
				return time.Time{}, false
			}
			t := jsonTime(at[:end])
			if t.IsZero() {
				return time.Time{}, false // the full path looks for "time"
			}
			env = firstTime(env, t)
		case klogTime:
			h, ok := klogTokenTime(at)
			if !ok {
				return time.Time{}, false
			}
			if env.IsZero() {
				env = lc.clock.klog(h, lc.ref)
			}
		}
	}
	if !env.IsZero() {
		env = env.UTC()
	}
	return env, true
}

// klogTokenTime is envelope.KlogHeader(s) for a line whose header, but for its time, is that of a
// remembered line: it checks and reads only the time (month, day, clock and a fraction that
// ends inside the token). ok is false where envelope.KlogHeader would refuse the time or read it
// otherwise; TestKlogTokenTime compares the two.
func klogTokenTime(s string) (envelope.Klog, bool) {
	h, ok := envelope.KlogClock(s)
	if !ok {
		return h, false
	}
	if s[14] == '.' {
		j := 15
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			h.US = h.US*10 + int(s[j]-'0')
			j++
		}
		if j >= klogTokenMax {
			return h, false // more digits than the token holds: envelope.KlogHeader reads them otherwise
		}
	}
	return h, true
}

// memoFormats are the formats whose every time the recorder sees.
func memoFormat(f string) bool {
	for f != "" {
		part, rest, _ := strings.Cut(f, "+")
		switch part {
		case "klog", "cri", "docker", "kubectl", "json": // "json": flat lines (the recorder refuses the others)
		default:
			return false
		}
		f = rest
	}
	return true
}

// store remembers line, just parsed in full with m.rec recording, as its record and event.
func (m *lineMemo) store(st *inputState, line string, rec *Record, host, component string, ev *Event) {
	r := &m.rec
	if r.bad || r.n == 0 || r.base != line || rec.Audit != nil || ev.Audit != nil || !memoFormat(rec.Format) {
		return
	}
	e := &memoLine{st: st, line: strings.Clone(line), toks: append([]timeToken(nil), r.toks[:r.n]...), format: strings.Clone(rec.Format),
		host: host, component: component, ownHost: rec.Host != st.lc.host, ev: *ev}
	e.ev.Time, e.ev.Line, e.ev.Format = time.Time{}, "", e.format
	// Sorted by offset, and apart: a token's variable bytes end before the next one starts.
	e.byOff = make([]int, len(e.toks))
	for i := range e.byOff {
		e.byOff[i] = i
	}
	for i := 1; i < len(e.byOff); i++ {
		for j := i; j > 0 && e.toks[e.byOff[j]].off < e.toks[e.byOff[j-1]].off; j-- {
			e.byOff[j], e.byOff[j-1] = e.byOff[j-1], e.byOff[j]
		}
	}
	end := 0
	for _, i := range e.byOff {
		tk := e.toks[i]
		if tokenStart(tk.kind, tk.off) < end || tk.off < end {
			return
		}
		if end = tokenEnd(tk.kind, e.line, tokenStart(tk.kind, tk.off)); end < 0 {
			return
		}
	}
	s := &m.slots[lineSlot(line)]
	s[1], s[0] = s[0], e
}
