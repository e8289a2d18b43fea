package logs

import (
	"bytes"
	"sort"
	"strings"
)

// gate finds lines worth parsing: those that contain an anchor, the most distinctive literal of
// a catalogue message (plus the authentication and audit markers). It looks at every byte
// pair of the input once: a pair table holds the rarest pair of each anchor, and a hit is
// verified against the anchors that own that pair.
type gate struct {
	bits    [1024]uint64 // 65536-bit set of pairs
	slot    [65536]uint8 // pair -> 1 + index into refs, 0 when none
	refs    [][]anchorRef
	anchors []string
}

type anchorRef struct {
	anchor []byte
	off    int // offset of the pair inside the anchor
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
		add(anchorOf(&m.all[i]))
	}
	// An anchor that contains another is redundant.
	sort.Slice(anchors, func(i, j int) bool { return len(anchors[i]) < len(anchors[j]) })
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
	for _, a := range kept {
		off := rarestPair(a)
		pair := uint16(a[off])<<8 | uint16(a[off+1])
		if g.slot[pair] == 0 {
			g.refs = append(g.refs, nil)
			g.slot[pair] = uint8(len(g.refs))
		}
		k := g.slot[pair] - 1
		g.refs[k] = append(g.refs[k], anchorRef{anchor: []byte(a), off: off})
		g.bits[pair>>6] |= 1 << (pair & 63)
	}
	return g
}

// byteCommonness estimates how often a byte occurs in control-plane logs (higher is commoner).
func byteCommonness(c byte) int {
	const letters = "etaoinsrhldcumfpgwybvkxjqz"
	switch {
	case c == ' ':
		return 100
	case c >= '0' && c <= '9':
		return 80
	case c >= 'a' && c <= 'z':
		return 90 - 3*strings.IndexByte(letters, c)
	case c == 'I' || c == 'E' || c == 'W':
		return 45
	case c >= 'A' && c <= 'Z':
		return 12
	case strings.IndexByte(".:-/=\"_,", c) >= 0:
		return 50
	}
	return 8
}

func rarestPair(a string) int {
	best, score := 0, 1<<30
	for i := 0; i+1 < len(a); i++ {
		s := byteCommonness(a[i]) * byteCommonness(a[i+1])
		if s < score {
			best, score = i, s
		}
	}
	return best
}

// next returns the offset of the first anchor occurrence at or after from, or -1.
func (g *gate) next(b []byte, from int) int {
	if from < 0 {
		from = 0
	}
	n := len(b) - 1
	for i := from; i < n; i++ {
		pair := uint16(b[i])<<8 | uint16(b[i+1])
		if g.bits[pair>>6]&(1<<(pair&63)) == 0 {
			continue
		}
		for _, r := range g.refs[g.slot[pair]-1] {
			start := i - r.off
			if start >= 0 && start+len(r.anchor) <= len(b) && bytes.Equal(b[start:start+len(r.anchor)], r.anchor) {
				return start
			}
		}
	}
	return -1
}
