// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scan

import (
	"bytes"
	"sort"
)

// wuManber is the portable anchor scan, used where AVX2 is missing. It is a Wu-Manber
// multi-pattern scan: every anchor contributes a window of m bytes (m is the shortest anchor's
// length), and a table keyed by the hash of a byte triple says how far the
// scan may jump when that triple ends the current window. Ordinary log text rarely ends a window
// with a triple from the anchors, so the scan mostly jumps m-2 bytes at a time; only where the
// shift is 0 are the anchors that end in that triple compared.
type wuManber struct {
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

func newWuManber(kept []string) *wuManber {
	g := &wuManber{anchors: kept, m: len(kept[0])}
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
func (g *wuManber) lines(b []byte, starts []int) []int {
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
func (g *wuManber) verify(b []byte, cands []int, found []int) []int {
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
