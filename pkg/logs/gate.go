package logs

import (
	"bytes"
	"sort"
	"strings"

	"github.com/credwatch/credwatch/pkg/logs/cause"
)

// gate finds lines worth parsing: those that contain an anchor, the most distinctive literal of
// a catalogue message that may stand on its own (plus the authentication and audit markers).
//
// It is a Wu-Manber multi-pattern scan: every anchor contributes a window of m bytes (m is the
// shortest anchor's length), and a table keyed by the hash of a byte triple says how far the
// scan may jump when that triple ends the current window. Ordinary log text rarely ends a window
// with a triple from the anchors, so the scan mostly jumps m-2 bytes at a time; only where the
// shift is 0 are the anchors that end in that triple compared.
type gate struct {
	anchors []string
	m       int                 // window length
	shift   [gateHash]uint8     // jump for a window ending in a triple with this hash
	jump    [gateHash]uint8     // max(shift, 1), marked gateCand where shift is 0
	cands   [gateHash][]gateRef // anchors whose window ends in a triple with this hash
}

type gateRef struct {
	anchor []byte
	off    int // where the window starts inside the anchor
}

const gateHash = 1 << 15

func tripleHash(a, b, c byte) int { return (int(a)<<10 ^ int(b)<<5 ^ int(c)) & (gateHash - 1) }

// anchorOf picks the longest run of a pattern's literal text that survives any envelope's
// escaping (no quotes, backslashes or HTML-escaped characters).
func anchorOf(literals []string) string {
	best := ""
	for _, s := range literals {
		for _, run := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune("\"\\<>&\n\t", r) || r > 127 }) {
			if len(run) > len(best) {
				best = run
			}
		}
	}
	return best
}

func newGate(msgs []cause.Message) *gate {
	seen := map[string]bool{}
	var anchors []string
	add := func(a string) {
		if len(a) >= 3 && !seen[a] {
			seen[a] = true
			anchors = append(anchors, a)
		}
	}
	for _, a := range cause.Markers {
		add(a)
	}
	for _, msg := range msgs {
		add(anchorOf(msg.Literals))
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
	g := &gate{anchors: kept, m: len(kept[0])}
	for _, a := range kept {
		g.m = min(g.m, len(a))
	}
	for i := range g.shift {
		g.shift[i] = uint8(min(g.m-2, gateCand-1))
	}
	for _, a := range kept {
		off := rarestWindow(a, g.m)
		w := a[off : off+g.m]
		for j := 0; j+2 < g.m; j++ {
			h := tripleHash(w[j], w[j+1], w[j+2])
			g.shift[h] = min(g.shift[h], uint8(g.m-3-j))
		}
		h := tripleHash(w[g.m-3], w[g.m-2], w[g.m-1])
		g.cands[h] = append(g.cands[h], gateRef{anchor: []byte(a), off: off})
	}
	for h, s := range g.shift {
		g.jump[h] = max(s, 1)
		if s == 0 {
			g.jump[h] = gateCand | 1
		}
	}
	return g
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

// rarestWindow picks the window of a whose byte pairs (a fair proxy for its triples) are rarest
// in ordinary text, so that the scan jumps far over ordinary text.
func rarestWindow(a string, m int) int {
	best, score := 0, 2.0
	for off := 0; off+m <= len(a); off++ {
		s := 0.0
		for j := off; j+1 < off+m; j++ {
			s += byteFrequency(a[j]) * byteFrequency(a[j+1])
		}
		if s < score {
			best, score = off, s
		}
	}
	return best
}

// gateStreams is how many independent scans of one block run interleaved: each jump depends on
// a table load, so one scan is bound by load latency; several keep the core busy.
const gateStreams = 4

// gateBatch is how many jumps each stream makes before its candidates are verified.
const gateBatch = 512

// gateCand marks a jump-table entry whose triple ends some anchor's window: the window there is a
// candidate to verify. The low bits are the jump.
const gateCand = 0x80

// lines appends to starts the offsets of the lines of b that contain an anchor, sorted and
// without duplicates.
//
// The scan is branch-free: every stream looks up its jump, records its position as a candidate
// (the record counts only where the entry is marked) and jumps by at least one byte. Candidates
// are verified in batches, so the hot loop never mispredicts on a rare triple.
func (g *gate) lines(b []byte, starts []int) []int {
	starts = starts[:0]
	m := g.m
	if len(b) < m {
		return starts
	}
	var lo, hi [gateStreams]int
	seg := (len(b) + gateStreams - 1) / gateStreams
	for k := range gateStreams {
		lo[k] = max(k*seg, m-3)
		hi[k] = min((k+1)*seg, len(b)-2)
	}
	tbl := &g.jump
	var cand [gateStreams][gateBatch]int
	p0, p1, p2, p3 := lo[0], lo[1], lo[2], lo[3]
	h0, h1, h2, h3 := hi[0], hi[1], hi[2], hi[3]
	for p0 < h0 && p1 < h1 && p2 < h2 && p3 < h3 {
		n0, n1, n2, n3 := 0, 0, 0, 0
		for it := 0; it < gateBatch && p0 < h0 && p1 < h1 && p2 < h2 && p3 < h3; it++ {
			v0 := tbl[tripleHash(b[p0], b[p0+1], b[p0+2])]
			v1 := tbl[tripleHash(b[p1], b[p1+1], b[p1+2])]
			v2 := tbl[tripleHash(b[p2], b[p2+1], b[p2+2])]
			v3 := tbl[tripleHash(b[p3], b[p3+1], b[p3+2])]
			cand[0][n0], cand[1][n1], cand[2][n2], cand[3][n3] = p0, p1, p2, p3
			n0 += int(v0 >> 7)
			n1 += int(v1 >> 7)
			n2 += int(v2 >> 7)
			n3 += int(v3 >> 7)
			p0 += int(v0 & (gateCand - 1))
			p1 += int(v1 & (gateCand - 1))
			p2 += int(v2 & (gateCand - 1))
			p3 += int(v3 & (gateCand - 1))
		}
		starts = g.verify(b, cand[0][:n0], starts)
		starts = g.verify(b, cand[1][:n1], starts)
		starts = g.verify(b, cand[2][:n2], starts)
		starts = g.verify(b, cand[3][:n3], starts)
	}
	// Finish each stream alone.
	pos := [gateStreams]int{p0, p1, p2, p3}
	for k := range gateStreams {
		p, h := pos[k], hi[k]
		for p < h {
			n := 0
			for ; n < gateBatch && p < h; p += int(tbl[tripleHash(b[p], b[p+1], b[p+2])] & (gateCand - 1)) {
				cand[0][n] = p
				n += int(tbl[tripleHash(b[p], b[p+1], b[p+2])] >> 7)
			}
			starts = g.verify(b, cand[0][:n], starts)
		}
	}
	sort.Ints(starts) // streams meet inside lines: a line may come twice
	out := starts[:0]
	for i, ls := range starts {
		if i == 0 || ls != starts[i-1] {
			out = append(out, ls)
		}
	}
	return out
}

// verify compares the anchors whose window ends at each candidate (the position of the window's
// last triple, ascending) and appends the starts of the lines that hold one.
func (g *gate) verify(b []byte, cands []int, found []int) []int {
	lineEnd := -1 // candidates before here are on a line already found
	for _, i := range cands {
		if i < lineEnd {
			continue
		}
		end := i + 3 // the window is b[end-m:end]
		for _, r := range g.cands[tripleHash(b[i], b[i+1], b[i+2])] {
			s := end - g.m - r.off
			if s >= 0 && s+len(r.anchor) <= len(b) && bytes.Equal(b[s:s+len(r.anchor)], r.anchor) {
				found = append(found, bytes.LastIndexByte(b[:s], '\n')+1)
				lineEnd = len(b)
				if nl := bytes.IndexByte(b[end:], '\n'); nl >= 0 {
					lineEnd = end + nl
				}
				break
			}
		}
	}
	return found
}
