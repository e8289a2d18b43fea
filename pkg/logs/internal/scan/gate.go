// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scan

import (
	"bytes"
	"sort"
	"strings"
)

// Gate finds lines worth parsing: those that contain an anchor (Anchors: the most distinctive
// literal of each catalogue message that may stand on its own, plus the authentication and audit
// markers). It knows nothing of log formats and runs before any parser, as Loki's line filters
// do. On amd64 with AVX2 it is a Teddy scan (teddy.go); elsewhere a Wu-Manber scan (wumanber.go).
// Both return the same lines.
type Gate struct {
	anchors []string
	td      *teddy    // nil without AVX2
	wm      *wuManber // used when td is nil
}

// NewGate builds the scan for anchors (Anchors), the fastest this CPU runs.
func NewGate(anchors []string) *Gate {
	g := &Gate{anchors: anchors, td: newTeddy(anchors)}
	if g.td == nil {
		g.wm = newWuManber(anchors)
	}
	return g
}

// Variants are every scan a gate for anchors may use on this CPU, by name (tests and benchmarks
// compare them); logf says which it cannot run.
func Variants(anchors []string, logf func(format string, args ...any)) map[string]*Gate {
	v := map[string]*Gate{"wu-manber": {anchors: anchors, wm: newWuManber(anchors)}}
	if !teddyFits(anchors) {
		logf("teddy: anchors too short or not ASCII")
		return v
	}
	v["teddy-in-go"] = &Gate{anchors: anchors, td: buildTeddy(anchors)}
	for _, simd := range []struct {
		name string
		with teddySIMD
		ok   bool
	}{{"teddy-avx2", teddyWithAVX2, teddyAVX2}, {"teddy-avx512", teddyWithAVX512, teddyAVX512}} {
		if !simd.ok {
			logf("%s: not on this CPU", simd.name)
			continue
		}
		td := buildTeddy(anchors)
		td.simd = simd.with
		v[simd.name] = &Gate{anchors: anchors, td: td}
	}
	return v
}

// Anchors is what the gate looks for.
func (g *Gate) Anchors() []string { return g.anchors }

// Scanned is what the Gate found in a block.
type Scanned struct {
	Starts   []int // offsets of the lines that contain an anchor, ascending
	Lines    []int // newlines before each of them
	Ends     []int // where each of them ends (its newline, or the block's end); filled by the Teddy scan only
	Newlines int   // newlines in the block
	NUL      bool  // the block holds a NUL byte
	ASCII    bool  // every byte of the block is below 128, so every line is valid UTF-8 (SIMD scans only; else false)
}

// Scan fills sc (reusing its slices) from block b.
func (g *Gate) Scan(b []byte, sc *Scanned) {
	if g.td != nil {
		g.td.scan(b, sc)
		return
	}
	sc.Starts = g.wm.lines(b, sc.Starts)
	sc.Lines, sc.Ends = sc.Lines[:0], sc.Ends[:0]
	counted, n := 0, 0
	for _, s := range sc.Starts {
		n += bytes.Count(b[counted:s], newline)
		sc.Lines = append(sc.Lines, n)
		counted = s
	}
	sc.Newlines = n + bytes.Count(b[counted:], newline)
	sc.NUL, sc.ASCII = bytes.IndexByte(b, 0) >= 0, false
}

var newline = []byte{'\n'}

// Lines is Scan's Starts alone.
func (g *Gate) Lines(b []byte, starts []int) []int {
	sc := Scanned{Starts: starts}
	g.Scan(b, &sc)
	return sc.Starts
}

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

// holdsMarker says whether one of a message's escape-proof runs holds a marker: a line with the
// message then holds the marker too and passes the gate by it, so the message needs no anchor of
// its own. Every anchor costs the scan (more bucket collisions, more candidates to check): with
// issue 43's consumer messages the gate had 158, and a sparse log scanned at 3.8 GB/s against
// 8.5 before them (BenchmarkAnalyzeFile, 512 MiB, 2026-12-07).
func holdsMarker(literals, markers []string) bool {
	for _, s := range literals {
		for _, run := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune("\"\\<>&\n\t", r) || r > 127 }) {
			for _, m := range markers {
				if strings.Contains(run, m) {
					return true
				}
			}
		}
	}
	return false
}

// Anchors are the gate's anchors for markers and the literal segments of each message that
// may classify a line on its own (cause.Markers, cause.Standalone): the markers and each
// message's longest escape-proof run (anchorOf), of 3 bytes or more, less those that contain
// another; a message one of whose runs holds a marker adds none (holdsMarker).
func Anchors(markers []string, literals [][]string) []string {
	seen := map[string]bool{}
	var anchors []string
	add := func(a string) {
		if len(a) >= 3 && !seen[a] {
			seen[a] = true
			anchors = append(anchors, a)
		}
	}
	for _, a := range markers {
		add(a)
	}
	for _, l := range literals {
		if !holdsMarker(l, markers) {
			add(anchorOf(l))
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
	return kept
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
