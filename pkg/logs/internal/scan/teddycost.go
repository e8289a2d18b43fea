// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scan

import (
	"maps"
	"math/bits"
	"slices"
)

// The cost model of the Teddy scan's buckets: which window of an anchor becomes its fingerprint,
// and in which bucket, so that ordinary log text passes the nibble tables as rarely as it can.

// commonLogWords are words frequent in the ordinary lines of kube-apiserver logs (the lab
// captures' lines that hold no anchor; request URIs, trace fields and controller messages): a
// fingerprint inside one of them would be a candidate all the time, found by the scan and
// dropped by the check. "spac" of "namespace", in every request's URI, made the scan of a dense
// log twice as slow when the gate's anchors grew to about 100 (docs/logs.md, 2026-12-05).
var commonLogWords = []string{"leader", "election", "initialized", "authorized", "authentication", "error",
	"failed", "token", "service", "account", "request", "connection", "certificate", "kubernetes",
	"controller", "timeout", "invalid", "update", "lease", "endpoint", "cluster", "context", "deadline",
	"exceeded", "client", "server", "the ", " to ", "tion", "ing ", "ed to", "call", "webhook", "node",
	"namespace", "resource", "create", "version", "value", "valid", "instance", "info", "mapping", "refresh",
	"Starting", "Waiting", "existing", "setting", "object", "status", "watch", "cache", "pass",
	// Every request's trace line: `audit-ID` and the `admission` step. Issue 43's anchors put
	// fingerprints in them (" aud" of "… audience", "issi" of "missing"), and the scan of a
	// sparse log went from 63 ms to 158 ms per 512 MiB (BenchmarkAnalyzeFile, 2026-12-07).
	" audit-ID", "admission", "mission",
	// Every request's httplog line and the controllers' informers: `URI="/api/v1/namespaces/
	// kube-system/pods?…" … resp=200`, `cacher (pods): initialized`.
	"/kube-system", "/pods", "(pods)", "resp=200", "latency", "userAgent", "kubectl"}

// commonRate is how often a window of a common log word is taken to occur: once in a thousand
// bytes.
const commonRate = 1e-3

// knownWindows are the windows of teddyLen bytes known to be frequent in ordinary log text, with
// the share of a log's positions where each occurs: those of commonLogWords (commonRate) and
// those the trainer measured (trainedWindows), the larger where both know one.
func knownWindows() map[string]float64 { return knownWith(trainedWindows) }

// knownWith is knownWindows with the windows trained.
func knownWith(trained []trainedWindow) map[string]float64 {
	m := map[string]float64{}
	for w := range commonWindows() {
		m[w] = commonRate
	}
	for _, tw := range trained {
		m[tw.window] = max(m[tw.window], tw.rate)
	}
	return m
}

// ownRate estimates how often window w occurs in ordinary log text: as known (knownWindows), else
// as often as its bytes.
func (t *passTable) ownRate(w string) float64 {
	if r, ok := t.known[w]; ok {
		return r
	}
	r := 1.0
	for i := range len(w) {
		r *= byteFrequency(w[i])
	}
	return r
}

// commonWindows returns every window of teddyLen bytes inside a common log word, with a space
// on either side as in a sentence: a word's start (" inv" of "invalid") is as common as the word.
func commonWindows() map[string]bool {
	m := map[string]bool{}
	for _, word := range commonLogWords {
		word = " " + word + " "
		for i := 0; i+teddyLen <= len(word); i++ {
			m[word[i:i+teddyLen]] = true
		}
	}
	return m
}

// passTable gives the share of ordinary log bytes whose nibbles are in a low-nibble set l and a
// high-nibble set h, as sums over h's rows of two halves of l (its low and high eight nibbles),
// tabulated: bestFingerprint asks it a million times.
type passTable struct {
	half  [16][2][256]float64 // by high nibble, half of l, the half's bits
	known map[string]float64  // knownWindows
	// hot[k][n] and hot[k][16+n] are the sets of known windows whose byte k has low nibble n
	// and high nibble n (bit i%64 of word i/64 for the i-th window): a bucket lets through the
	// windows in every position's union over its low-nibble set's sets, intersected with the
	// union over its high-nibble set's (hotSets).
	hot     [teddyLen][32][]uint64
	hotRate []float64 // the i-th window's rate
	words   int       // the length of each set
}

func newPassTable(known map[string]float64) *passTable {
	t := &passTable{known: known}
	t.words = (len(known) + 63) / 64
	sets := make([]uint64, teddyLen*32*t.words)
	for k := range teddyLen {
		for n := range 32 {
			t.hot[k][n], sets = sets[:t.words:t.words], sets[t.words:]
		}
	}
	// In a fixed order: bestFingerprint sums the rates of the windows it opens, and a sum in
	// another order could pick another fingerprint in a tie.
	for _, w := range slices.Sorted(maps.Keys(known)) {
		r, i := known[w], len(t.hotRate)
		for k := range teddyLen {
			t.hot[k][w[k]&15][i/64] |= 1 << (i % 64)
			t.hot[k][16+w[k]>>4][i/64] |= 1 << (i % 64)
		}
		t.hotRate = append(t.hotRate, r)
	}
	for h := range 16 {
		for half := range 2 {
			row := &t.half[h][half]
			for m := 1; m < 256; m++ {
				low := bits.TrailingZeros8(uint8(m))
				row[m] = row[m&(m-1)] + byteFrequency(byte(h<<4|half*8+low))
			}
		}
	}
	return t
}

// hotSets fills lo[k] and hi[k] with the known windows whose byte k a bucket's nibble sets l[k]
// and h[k] allow.
func (t *passTable) hotSets(l, h *[teddyLen]uint16, lo, hi *[teddyLen][]uint64) {
	for k := range teddyLen {
		clear(lo[k])
		clear(hi[k])
		for n := range 16 {
			if l[k]&(1<<n) != 0 {
				orInto(lo[k], t.hot[k][n])
			}
			if h[k]&(1<<n) != 0 {
				orInto(hi[k], t.hot[k][16+n])
			}
		}
	}
}

func orInto(dst, src []uint64) {
	for i := range dst {
		dst[i] |= src[i]
	}
}

func (t *passTable) pass(l, h uint16) float64 {
	p := 0.0
	for ; h != 0; h &= h - 1 {
		rows := &t.half[bits.TrailingZeros16(h)]
		p += rows[0][l&0xff] + rows[1][l>>8]
	}
	return p
}

// bestFingerprint picks the window of a and the bucket whose estimated false-positive rate (the
// chance that ordinary log bytes pass all its nibble sets, plus the window's own rate, plus that
// of every known window the bucket lets through anew) grows least when the window joins it.
func bestFingerprint(lo, hi *[teddyBuckets][teddyLen]uint16, a string, pt *passTable) (off, bucket int) {
	own := make([]float64, len(a)-teddyLen+1)
	for o := range own {
		own[o] = pt.ownRate(a[o : o+teddyLen])
	}
	bestGrowth := 2.0
	// The known windows bucket b lets through at each position: those whose byte there is in
	// its low-nibble and its high-nibble set.
	var hotLo, hotHi [teddyLen][]uint64
	for k := range teddyLen {
		hotLo[k], hotHi[k] = make([]uint64, pt.words), make([]uint64, pt.words)
	}
	for b := range teddyBuckets {
		var now [teddyLen]float64
		before := 1.0
		for k := range teddyLen {
			now[k] = pt.pass(lo[b][k], hi[b][k])
			before *= now[k]
		}
		pt.hotSets(&lo[b], &hi[b], &hotLo, &hotHi)
		for o := 0; o+teddyLen <= len(a); o++ {
			after := 1.0
			for k := range teddyLen {
				c := a[o+k]
				if l, h := lo[b][k]|1<<(c&15), hi[b][k]|1<<(c>>4); l != lo[b][k] || h != hi[b][k] {
					after *= pt.pass(l, h)
				} else {
					after *= now[k]
				}
			}
			// The known windows the bucket lets through once a[o:] joins it, and not before.
			opened := 0.0
			w := a[o : o+teddyLen]
			for i := range pt.words {
				was, will := ^uint64(0), ^uint64(0)
				for k := range teddyLen {
					l, h := hotLo[k][i], hotHi[k][i]
					was &= l & h
					will &= (l | pt.hot[k][w[k]&15][i]) & (h | pt.hot[k][16+w[k]>>4][i])
				}
				for m := will &^ was; m != 0; m &= m - 1 {
					opened += pt.hotRate[i*64+bits.TrailingZeros64(m)]
				}
			}
			if g := after - before + own[o] + opened; g < bestGrowth {
				off, bucket, bestGrowth = o, b, g
			}
		}
	}
	return off, bucket
}

// teddyAssignment is the trainer's choice of fingerprints and buckets for one list of anchors
// (anchorsHash).
type teddyAssignment struct {
	anchors uint64
	choices []teddyChoice
}

// trainedWindow is a window the trainer measured (teddytrain_test.go): the share of positions of
// its corpus where the scan stopped on it without finding an anchor.
type trainedWindow struct {
	window string
	rate   float64
}
