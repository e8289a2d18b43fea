package logs

import (
	"bytes"
	"sort"
	"strings"

	"github.com/credwatch/credwatch/pkg/logs/cause"
)

// gate finds lines worth parsing: those that contain an anchor, the most distinctive literal of
// a catalogue message that may stand on its own (plus the authentication and audit markers).
// On amd64 with AVX2 it is a Teddy scan (teddy.go); elsewhere a Wu-Manber scan (wumanber.go).
// Both return the same lines.
type gate struct {
	anchors []string
	td      *teddy    // nil without AVX2
	wm      *wuManber // used when td is nil
}

func newGate(msgs []cause.Message) *gate {
	anchors := gateAnchors(msgs)
	g := &gate{anchors: anchors, td: newTeddy(anchors)}
	if g.td == nil {
		g.wm = newWuManber(anchors)
	}
	return g
}

// scanned is what the gate found in a block.
type scanned struct {
	starts   []int // offsets of the lines that contain an anchor, ascending
	lines    []int // newlines before each of them
	ends     []int // where each of them ends (its newline, or the block's end); filled by the Teddy scan only
	newlines int   // newlines in the block
	nul      bool  // the block holds a NUL byte
	ascii    bool  // every byte of the block is below 128, so every line is valid UTF-8 (AVX-512 scan only; else false)
}

// scan fills sc (reusing its slices) from block b.
func (g *gate) scan(b []byte, sc *scanned) {
	if g.td != nil {
		g.td.scan(b, sc)
		return
	}
	sc.starts = g.wm.lines(b, sc.starts)
	sc.lines, sc.ends = sc.lines[:0], sc.ends[:0]
	counted, n := 0, 0
	for _, s := range sc.starts {
		n += bytes.Count(b[counted:s], newline)
		sc.lines = append(sc.lines, n)
		counted = s
	}
	sc.newlines = n + bytes.Count(b[counted:], newline)
	sc.nul, sc.ascii = bytes.IndexByte(b, 0) >= 0, false
}

var newline = []byte{'\n'}

// lines is scan's starts alone.
func (g *gate) lines(b []byte, starts []int) []int {
	sc := scanned{starts: starts}
	g.scan(b, &sc)
	return sc.starts
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

func gateAnchors(msgs []cause.Message) []string {
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
