package logs

import (
	"bytes"
	"sort"
	"strings"
)

// gate finds lines worth parsing: those that contain an anchor, the most distinctive literal of
// a catalogue message that may stand on its own (plus the authentication and audit markers).
// It picks a small set of rare bytes that together occur in every anchor, scans a block once per
// rare byte with bytes.IndexByte (vectorised), and verifies the anchors around each occurrence.
type gate struct {
	rare    []*rareByte
	anchors []string
}

type rareByte struct {
	b    byte
	next [256][]anchorRef // by the byte after the rare byte in the anchor
}

type anchorRef struct {
	anchor []byte
	off    int // offset of the rare byte inside the anchor; the anchor has a byte after it
}

// Markers that put a line through the gate besides the catalogue's own texts.
var gateMarkers = []string{"Unable to authenticate", `"code":401`}

// anchorOf picks the longest run of a pattern's literal text that survives any envelope's
// escaping (no quotes, backslashes or HTML-escaped characters).
func anchorOf(p *pattern) string {
	best := ""
	for _, s := range p.segs {
		for _, run := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune("\"\\<>&\n\t", r) || r > 127 }) {
			if len(run) > len(best) {
				best = run
			}
		}
	}
	return best
}

func newGate(m *matchers) *gate {
	seen := map[string]bool{}
	var anchors []string
	add := func(a string) {
		if len(a) >= 3 && !seen[a] {
			seen[a] = true
			anchors = append(anchors, a)
		}
	}
	for _, a := range gateMarkers {
		add(a)
	}
	for i := range m.all {
		if standalone(&m.all[i]) { // the others only occur inside "Unable to authenticate" lines
			add(anchorOf(&m.all[i]))
		}
	}
	// An anchor that contains another is redundant.
	sort.Slice(anchors, func(i, j int) bool {
		return len(anchors[i]) < len(anchors[j]) || len(anchors[i]) == len(anchors[j]) && anchors[i] < anchors[j]
	})
	var kept []string
	for _, a := range anchors {
		redundant := false
		for _, k := range kept {
			if strings.Contains(a, k) {
				redundant = true
				break
			}
		}
		if !redundant {
			kept = append(kept, a)
		}
	}
	g := &gate{anchors: kept}
	// Greedy set cover: take the byte that covers the most uncovered anchors per unit of
	// scan cost until every anchor is covered; each anchor is verified from its first cover.
	uncovered := append([]string(nil), kept...)
	for len(uncovered) > 0 {
		var best byte
		bestScore := -1.0
		for c := 1; c < 256; c++ {
			n := 0
			for _, a := range uncovered {
				if strings.IndexByte(a[:len(a)-1], byte(c)) >= 0 {
					n++
				}
			}
			if score := float64(n) / scanCost(byte(c)); n > 0 && score > bestScore {
				best, bestScore = byte(c), score
			}
		}
		rb := rareByte{b: best}
		var rest []string
		for _, a := range uncovered {
			if off := strings.IndexByte(a[:len(a)-1], best); off >= 0 {
				rb.next[a[off+1]] = append(rb.next[a[off+1]], anchorRef{anchor: []byte(a), off: off})
			} else {
				rest = append(rest, a)
			}
		}
		g.rare = append(g.rare, &rb)
		uncovered = rest
	}
	g.prune()
	return g
}

// prune drops the costliest passes whose anchors another pass also covers.
func (g *gate) prune() {
	sort.SliceStable(g.rare, func(i, j int) bool { return scanCost(g.rare[i].b) > scanCost(g.rare[j].b) })
	for i := 0; i < len(g.rare); {
		rb := g.rare[i]
		moved := map[*rareByte][]anchorRef{}
		ok := true
		for _, refs := range rb.next {
			for _, r := range refs {
				found := false
				for _, o := range g.rare {
					if o == rb {
						continue
					}
					if off := bytes.IndexByte(r.anchor[:len(r.anchor)-1], o.b); off >= 0 {
						moved[o] = append(moved[o], anchorRef{anchor: r.anchor, off: off})
						found = true
						break
					}
				}
				if !found {
					ok = false
				}
			}
		}
		if !ok {
			i++
			continue
		}
		for o, refs := range moved {
			for _, r := range refs {
				o.next[r.anchor[r.off+1]] = append(o.next[r.anchor[r.off+1]], r)
			}
		}
		g.rare = append(g.rare[:i], g.rare[i+1:]...)
	}
}

// byteFrequency estimates how often a byte occurs in control-plane logs (share of all bytes).
func byteFrequency(c byte) float64 {
	// English letter frequencies (per cent) scaled to the share of letters in log text.
	letters := [26]float64{8.2, 1.5, 2.8, 4.3, 12.7, 2.2, 2.0, 6.1, 7.0, 0.15, 0.8, 4.0, 2.4, 6.7, 7.5, 1.9, 0.1, 6.0, 6.3, 9.1, 2.8, 1.0, 2.4, 0.15, 2.0, 0.07}
	switch {
	case c == ' ':
		return 0.12
	case c >= '0' && c <= '9':
		return 0.02
	case c >= 'a' && c <= 'z':
		return letters[c-'a'] / 100 * 0.6
	case strings.IndexByte("IEW", c) >= 0: // klog severities
		return 0.005
	case strings.IndexByte("HTPGSRUAC", c) >= 0: // HTTP, GET, URI, Trace, Content-Type
		return 0.003
	case c >= 'A' && c <= 'Z':
		return 0.001
	case strings.IndexByte(".:-/=\"_,", c) >= 0:
		return 0.012
	}
	return 0.002
}

// scanCost is the cost of one pass for byte c per input byte, in nanoseconds: the vectorised
// scan plus a call and a verification per occurrence.
func scanCost(c byte) float64 { return 0.06 + 40*byteFrequency(c) }

// gateWindow is how much of a block the gate scans per rare byte before moving on: small
// enough to stay in the first-level cache across the passes.
const gateWindow = 64 << 10

// lines appends to starts the offsets of the lines of b that contain an anchor, sorted and
// without duplicates.
func (g *gate) lines(b []byte, starts []int) []int {
	starts = starts[:0]
	for lo := 0; lo < len(b); lo += gateWindow {
		hi := min(lo+gateWindow, len(b))
		for _, rb := range g.rare {
			w := b[lo:hi]
			for pos := 0; pos < len(w); {
				i := bytes.IndexByte(w[pos:], rb.b)
				if i < 0 {
					break
				}
				i += lo + pos
				pos = i - lo + 1
				if i+1 == len(b) {
					break
				}
				for _, r := range rb.next[b[i+1]] {
					s := i - r.off
					if s >= 0 && s+len(r.anchor) <= len(b) && bytes.Equal(b[s:s+len(r.anchor)], r.anchor) {
						starts = append(starts, bytes.LastIndexByte(b[:s], '\n')+1)
						break
					}
				}
			}
		}
	}
	sort.Ints(starts)
	out := starts[:0]
	for i, s := range starts {
		if i == 0 || s != starts[i-1] {
			out = append(out, s)
		}
	}
	return out
}
