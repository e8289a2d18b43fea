// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scan

import (
	"bytes"
	"encoding/binary"
	"hash/fnv"
	"math/bits"
)

// teddy is the anchor scan on amd64 with AVX2: Hyperscan's Teddy. Every anchor contributes a
// fingerprint, its rarest teddyLen consecutive bytes, and is put in one of 8 buckets. For each
// fingerprint byte position k there are two 16-entry tables, indexed by a byte's low and high
// nibble, holding the buckets whose fingerprints allow that nibble there. One VPSHUFB per table
// looks 32 positions up at once; a position is a candidate when some bucket survives all 2k
// lookups. Candidates (about 1 % of positions in apiserver logs) are checked exactly: their
// bytes must equal a fingerprint, then the anchor is compared.
type teddy struct {
	masks teddyMasks
	refs  [teddyHash][]teddyRef // by the hash of a fingerprint
	// slots has a bit for every hash refs has: most candidates of the SIMD scans are no
	// fingerprint, and this half-kilobyte stays in the L1 cache where refs (96 KiB) does not.
	slots [teddyHash / 64]uint64
	simd  teddySIMD
}

// teddySIMD is the instruction set a teddy scans with.
type teddySIMD int

const (
	teddyGo         teddySIMD = iota // the nibble tables in Go (tests; where no SIMD scan runs)
	teddyWithAVX2                    // teddyScan
	teddyWithAVX512                  // teddyScan512: AVX-512 VBMI
)

// teddyMasks is the layout teddy_amd64.s reads: lo[k] and hi[k] are the 16-byte tables of
// fingerprint byte k, each repeated for both 128-bit lanes of a YMM register; exact[k] has the
// buckets of every ASCII byte as fingerprint byte k (fingerprints are ASCII: anchorOf).
type teddyMasks struct {
	lo    [teddyLen][32]byte
	hi    [teddyLen][32]byte
	exact [teddyLen][128]byte
}

type teddyRef struct {
	fp     uint32 // the fingerprint, little-endian
	anchor []byte
	off    int // where the fingerprint starts inside the anchor
}

const (
	teddyLen     = 4
	teddyBuckets = 8
	teddyHash    = 1 << 12
)

func teddySlot(fp uint32) int { return int(fp * 0x9E3779B1 >> (32 - 12)) }

// newTeddy builds the scan, or returns nil where it cannot run (no AVX2, or anchors teddyFits
// refuses): the Gate then uses the Wu-Manber scan.
func newTeddy(anchors []string) *teddy {
	if !teddyAVX2 || !teddyFits(anchors) {
		return nil
	}
	t := buildTeddy(anchors)
	t.simd = teddyWithAVX2
	if teddyAVX512 {
		t.simd = teddyWithAVX512
	}
	return t
}

// teddyFits reports whether every anchor is as long as a fingerprint and ASCII: the SIMD scans
// look a byte of 128 or more up as no bucket's (teddyScan) or as its low 7 bits (teddyScan512).
// The catalogue's anchors are (anchorOf).
func teddyFits(anchors []string) bool {
	for _, a := range anchors {
		if len(a) < teddyLen || !isASCII([]byte(a)) {
			return false
		}
	}
	return true
}

// buildTeddy builds the scan for anchors: each anchor's fingerprint and bucket as the trainer
// chose them where anchors are the catalogue's it saw (trainedChoices), else as the cost model
// chooses them now (about 35 ms for the catalogue's 180 anchors, against nothing).
func buildTeddy(anchors []string) *teddy {
	choices := trainedChoices(anchors)
	if choices == nil {
		choices = chooseFingerprints(anchors, knownWindows())
	}
	return buildTeddyFrom(anchors, choices)
}

// teddyChoice is where an anchor's fingerprint starts and the bucket it is in.
type teddyChoice struct{ off, bucket int }

// chooseFingerprints picks every anchor's fingerprint and bucket in turn (bestFingerprint),
// knowing the windows frequent in ordinary log text and how often (knownWindows).
func chooseFingerprints(anchors []string, known map[string]float64) []teddyChoice {
	var lo, hi [teddyBuckets][teddyLen]uint16 // nibble sets per bucket and position
	pt := newPassTable(known)
	out := make([]teddyChoice, len(anchors))
	for i, a := range anchors {
		off, b := bestFingerprint(&lo, &hi, a, pt)
		for k, c := range []byte(a[off : off+teddyLen]) {
			lo[b][k] |= 1 << (c & 15)
			hi[b][k] |= 1 << (c >> 4)
		}
		out[i] = teddyChoice{off, b}
	}
	return out
}

// trainedChoices returns the trainer's choices (trainedAssignment) if anchors are those it chose
// them for, else nil.
func trainedChoices(anchors []string) []teddyChoice {
	if len(anchors) != len(trainedAssignment.choices) || anchorsHash(anchors) != trainedAssignment.anchors {
		return nil
	}
	return trainedAssignment.choices
}

// anchorsHash is FNV-1a of the anchors, each followed by a NUL byte.
func anchorsHash(anchors []string) uint64 {
	h := fnv.New64a()
	for _, a := range anchors {
		h.Write([]byte(a))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// buildTeddyFrom builds the masks and the exact check for anchors with the fingerprints and
// buckets chosen.
func buildTeddyFrom(anchors []string, choices []teddyChoice) *teddy {
	t := &teddy{}
	var lo, hi [teddyBuckets][teddyLen]uint16 // nibble sets per bucket and position
	for i, a := range anchors {
		off, b := choices[i].off, choices[i].bucket
		fp := []byte(a[off : off+teddyLen])
		for k, c := range fp {
			lo[b][k] |= 1 << (c & 15)
			hi[b][k] |= 1 << (c >> 4)
			t.masks.exact[k][c&127] |= 1 << b
		}
		v := binary.LittleEndian.Uint32(fp)
		t.refs[teddySlot(v)] = append(t.refs[teddySlot(v)], teddyRef{fp: v, anchor: []byte(a), off: off})
		t.slots[teddySlot(v)/64] |= 1 << (teddySlot(v) % 64)
	}
	for b := range teddyBuckets {
		for k := range teddyLen {
			for n := range 16 {
				if lo[b][k]&(1<<n) != 0 {
					t.masks.lo[k][n] |= 1 << b
					t.masks.lo[k][n+16] |= 1 << b
				}
				if hi[b][k]&(1<<n) != 0 {
					t.masks.hi[k][n] |= 1 << b
					t.masks.hi[k][n+16] |= 1 << b
				}
			}
		}
	}
	return t
}

// scan fills sc from block b: the lines that contain an anchor with the newlines before each,
// the block's newlines and whether it holds a NUL byte, all in one pass where SIMD runs.
func (t *teddy) scan(b []byte, sc *Scanned) {
	sc.Starts, sc.Lines, sc.Ends, sc.NUL, sc.ASCII = sc.Starts[:0], sc.Lines[:0], sc.Ends[:0], false, t.simd != teddyGo
	lineEnd := 0 // candidates before here are on a line already found
	pos := 0     // b[:pos] is Scanned
	counted := 0 // newlines in b[:pos]
	// record adds the line of the candidate at s, if it holds an anchor; before is the number
	// of newlines in b[:from], from <= s. It returns the line's start and the newlines before it.
	record := func(s, from, before int) (int, int, bool) {
		ls, end, ok := t.check(b, s)
		if !ok {
			return 0, 0, false
		}
		if ls > from { // else b[ls:from] is inside the line: no newline
			before += bytes.Count(b[from:ls], newline)
		}
		sc.Starts, sc.Lines, lineEnd = append(sc.Starts, ls), append(sc.Lines, before), end
		if end > 0 && b[end-1] == '\n' {
			end--
		}
		sc.Ends = append(sc.Ends, end)
		return ls, before, true
	}
	if t.simd != teddyGo {
		avx512, block := t.simd == teddyWithAVX512, teddyBlock
		if avx512 {
			block = teddyBlock512
		}
		// Called directly, not through a func value, so that out and nls stay on the stack
		// (go:noescape is not seen through one).
		var out [256]uint64
		var nls [256]uint32
		for pos+block <= len(b) {
			var n, next, lines int
			var flags uint8
			if avx512 {
				n, next, lines, flags = teddyScan512(&t.masks, b[pos:], out[:], nls[:])
			} else {
				n, next, lines, flags = teddyScan(&t.masks, b[pos:], out[:], nls[:])
			}
			sc.NUL = sc.NUL || flags&teddyNUL != 0
			sc.ASCII = sc.ASCII && flags&teddyASCII != 0
			for i, v := range out[:n] {
				base := pos + int(v>>32)
				for m := uint32(v); m != 0; m &= m - 1 {
					if s := base + bits.TrailingZeros32(m); s >= lineEnd && t.mayHold(b, s) {
						record(s, base, counted+int(nls[i]))
					}
				}
			}
			pos, counted = pos+next, counted+lines
		}
	}
	from, before := pos, counted // newlines in b[:from], counted as lines are found
	for s := max(pos, lineEnd); s+teddyLen <= len(b); s++ {
		r := byte(0xff)
		for k := range teddyLen {
			c := b[s+k]
			r &= t.masks.lo[k][c&15] & t.masks.hi[k][c>>4]
		}
		if r != 0 && s >= lineEnd {
			if ls, n, ok := record(s, from, before); ok && ls > from {
				from, before = ls, n
			}
		}
	}
	sc.Newlines = before + bytes.Count(b[from:], newline)
	sc.NUL = sc.NUL || bytes.IndexByte(b[pos:], 0) >= 0
	sc.ASCII = sc.ASCII && isASCII(b[pos:])
}

// The flags of teddyScan and teddyScan512.
const (
	teddyNUL   = 1 << iota // a NUL byte
	teddyASCII             // every byte below 128
)

// teddyBlock is how many bytes teddyScan needs from a position on: 32 positions and the three
// bytes after the last one.
const teddyBlock = 32 + teddyLen - 1

// teddyBlock512 is teddyBlock for teddyScan512.
const teddyBlock512 = 64 + teddyLen - 1

// mayHold reports whether b holds at s a fingerprint's hash (s+teddyLen <= len(b)): check
// without the call and the lookup in refs, for the candidates of the SIMD scans.
func (t *teddy) mayHold(b []byte, s int) bool {
	slot := teddySlot(binary.LittleEndian.Uint32(b[s:]))
	return t.slots[slot/64]&(1<<(slot%64)) != 0
}

// check compares the anchors whose fingerprint b holds at s; on a match it returns the start of
// the line and its end, before which no further candidate needs checking.
func (t *teddy) check(b []byte, s int) (start, end int, ok bool) {
	fp := binary.LittleEndian.Uint32(b[s:])
	for _, r := range t.refs[teddySlot(fp)] {
		a := s - r.off
		if r.fp != fp || a < 0 || a+len(r.anchor) > len(b) || !bytes.Equal(b[a:a+len(r.anchor)], r.anchor) {
			continue
		}
		start = lastNewline(b[:a]) + 1
		if nl := bytes.IndexByte(b[s:], '\n'); nl >= 0 {
			return start, s + nl + 1, true
		}
		return start, len(b), true
	}
	return 0, 0, false
}
