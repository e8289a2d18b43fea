package logs

import (
	"bytes"
	"sort"
	"strings"
)

// gate finds lines worth parsing: those that contain an anchor, the most distinctive literal of
// a catalogue message that may stand on its own (plus the authentication and audit markers).
//
// It is a Wu-Manber multi-pattern scan: every anchor contributes a window of m bytes (m is the
// shortest anchor's length), and a table keyed by the hash of a byte pair says how far the scan
// may jump when that pair ends the current window. Ordinary log text rarely ends a window with a
// pair from the anchors, so the scan mostly jumps m-1 bytes at a time; only where the shift is 0
// are the anchors that end in that pair compared.
type gate struct {
	anchors []string
	m       int                 // window length
	shift   [gateHash]uint8     // jump for a window ending in a pair with this hash
	cands   [gateHash][]gateRef // anchors whose window ends in a pair with this hash
}

type gateRef struct {
	anchor []byte
	off    int // where the window starts inside the anchor
}

const gateHash = 1 << 13

func pairHash(a, b byte) int { return (int(a)<<5 ^ int(b)) & (gateHash - 1) }

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
	g := &gate{anchors: kept, m: len(kept[0])}
	for _, a := range kept {
		g.m = min(g.m, len(a))
	}
	for i := range g.shift {
		g.shift[i] = uint8(min(g.m-1, 255))
	}
	for _, a := range kept {
		off := rarestWindow(a, g.m)
		w := a[off : off+g.m]
		for j := 0; j+1 < g.m; j++ {
			h := pairHash(w[j], w[j+1])
			g.shift[h] = min(g.shift[h], uint8(g.m-2-j))
		}
		h := pairHash(w[g.m-2], w[g.m-1])
		g.cands[h] = append(g.cands[h], gateRef{anchor: []byte(a), off: off})
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

// rarestWindow picks the window of a whose byte pairs are rarest in ordinary text, so that the
// scan jumps far over ordinary text.
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

// lines appends to starts the offsets of the lines of b that contain an anchor, sorted and
// without duplicates.
func (g *gate) lines(b []byte, starts []int) []int {
	starts = starts[:0]
	m := g.m
	if len(b) < m {
		return starts
	}
	// Stream k handles the windows whose pair starts in [lo[k], hi[k]).
	var pos, hi [gateStreams]int
	var found [gateStreams][]int
	seg := (len(b) + gateStreams - 1) / gateStreams
	for k := range gateStreams {
		pos[k] = max(k*seg, m-2)
		hi[k] = min((k+1)*seg, len(b)-1)
	}
	shift := &g.shift
	for {
		// The common case: every stream has room for a full jump.
		if pos[0]+m < hi[0] && pos[1]+m < hi[1] && pos[2]+m < hi[2] && pos[3]+m < hi[3] {
			s0 := shift[pairHash(b[pos[0]], b[pos[0]+1])]
			s1 := shift[pairHash(b[pos[1]], b[pos[1]+1])]
			s2 := shift[pairHash(b[pos[2]], b[pos[2]+1])]
			s3 := shift[pairHash(b[pos[3]], b[pos[3]+1])]
			if s0 != 0 && s1 != 0 && s2 != 0 && s3 != 0 {
				pos[0] += int(s0)
				pos[1] += int(s1)
				pos[2] += int(s2)
				pos[3] += int(s3)
				continue
			}
		}
		active := false
		for k := range gateStreams {
			if pos[k] >= hi[k] {
				continue
			}
			active = true
			pos[k], found[k] = g.step(b, pos[k], found[k])
		}
		if !active {
			break
		}
	}
	for k := range gateStreams {
		starts = append(starts, found[k]...)
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

// step examines the window whose last pair starts at i and returns where to look next.
func (g *gate) step(b []byte, i int, found []int) (int, []int) {
	h := pairHash(b[i], b[i+1])
	if s := g.shift[h]; s > 0 {
		return i + int(s), found
	}
	end := i + 2 // the window is b[end-m:end]
	for _, r := range g.cands[h] {
		s := end - g.m - r.off
		if s >= 0 && s+len(r.anchor) <= len(b) && bytes.Equal(b[s:s+len(r.anchor)], r.anchor) {
			ls := bytes.LastIndexByte(b[:s], '\n') + 1
			if n := len(found); n == 0 || found[n-1] != ls {
				found = append(found, ls)
			}
			// Nothing more to find on this line.
			if nl := bytes.IndexByte(b[end:], '\n'); nl >= 0 {
				return end + nl + g.m - 1, found
			}
			return len(b), found
		}
	}
	return i + 1, found
}
