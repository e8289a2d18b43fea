// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scan

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs/cause"
	"github.com/credwatch/credwatch/pkg/logs/internal/loggen"
)

// naiveGate is the gate's specification: the starts of the lines that contain an anchor.
func naiveGate(g *Gate, b []byte) []int {
	var out []int
	start := 0
	for _, line := range bytes.SplitAfter(b, []byte{'\n'}) {
		for _, a := range g.anchors {
			if bytes.Contains(line, []byte(a)) {
				out = append(out, start)
				break
			}
		}
		start += len(line)
	}
	return out
}

// catalogueAnchors are the default catalogue's anchors, as pkg/logs builds its gate: the
// markers, the credential path's words and each standalone message's anchor.
func catalogueAnchors() []string {
	return Anchors(slices.Concat(cause.Markers, cause.PathAnchors), cause.Literals(cause.Standalone(catalogue.Default())))
}

// gateVariants are every scan the gate may use on this machine.
func gateVariants(t testing.TB) map[string]*Gate { return Variants(catalogueAnchors(), t.Logf) }

// TestGateExact checks that every scan passes exactly the lines holding an anchor, on edge
// cases and on every short slice and a 1 MiB stretch of a generated log.
func TestGateExact(t *testing.T) {
	for name, g := range gateVariants(t) {
		t.Run(name, func(t *testing.T) { testGateExact(t, g) })
	}
}

func testGateExact(t *testing.T, g *Gate) {
	var log bytes.Buffer
	if _, _, err := loggen.Write(&log, loggen.Options{Bytes: 1 << 20, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	cases := []string{"", "Unauthorized", "xUnauthorized", "Unauthorized\n", `"code":401`,
		"a\"code\":401\nUnauthorizedq", "Unable to authenticate\nUnable to authenticate", "\n\n\nInvalidLogin"}
	long := strings.Repeat("x", 200)
	cases = append(cases, long+"Unauthorized", "Unauthorized"+long+"\n"+long, long+"\n"+long+"Unable to authenticate"+long,
		strings.Repeat("Unauthorized ", 2000), // a candidate in every 32 positions: the SIMD scans fill their output
		strings.Repeat(long+"InvalidLogin\n", 9)+strings.Repeat("x\nUnauthorized", 3000))
	for _, c := range cases {
		if got, want := g.Lines([]byte(c), nil), naiveGate(g, []byte(c)); !slices.Equal(got, want) {
			t.Errorf("%q: Gate %v, want %v", c, got, want)
		}
	}
	d := log.Bytes()
	for off := 0; off+64 < len(d); off += 4099 {
		for n := 0; n < 64; n++ {
			if got, want := g.Lines(d[off:off+n], nil), naiveGate(g, d[off:off+n]); !slices.Equal(got, want) {
				t.Fatalf("log[%d:%d]: Gate %v, want %v", off, off+n, got, want)
			}
		}
	}
	if got, want := g.Lines(d, nil), naiveGate(g, d); !slices.Equal(got, want) {
		t.Errorf("1 MiB log: Gate passes %d lines, want %d", len(got), len(want))
	}
	// Newline counts, over blocks of every alignment.
	for _, b := range [][]byte{d, d[1:], d[7:200_003], d[33 : 64*1024+5], []byte(cases[len(cases)-1])} {
		var sc Scanned
		g.Scan(b, &sc)
		if want := bytes.Count(b, newline); sc.Newlines != want {
			t.Errorf("%d bytes: %d newlines, want %d", len(b), sc.Newlines, want)
		}
		for i, s := range sc.Starts {
			if want := bytes.Count(b[:s], newline); sc.Lines[i] != want {
				t.Fatalf("%d bytes: line at %d has %d newlines before it, want %d", len(b), s, sc.Lines[i], want)
			}
		}
		checkEnds(t, b, &sc)
	}
	for _, c := range cases {
		var sc Scanned
		g.Scan([]byte(c), &sc)
		checkEnds(t, []byte(c), &sc)
	}
}

// checkEnds checks the line ends a scan found, if it reports them: each line's newline, or the
// block's end.
func checkEnds(t *testing.T, b []byte, sc *Scanned) {
	t.Helper()
	if len(sc.Ends) == 0 {
		return
	}
	if len(sc.Ends) != len(sc.Starts) {
		t.Fatalf("%d bytes: %d line ends for %d lines", len(b), len(sc.Ends), len(sc.Starts))
	}
	for i, s := range sc.Starts {
		want := bytes.IndexByte(b[s:], '\n')
		if want < 0 {
			want = len(b)
		} else {
			want += s
		}
		if sc.Ends[i] != want {
			t.Fatalf("%d bytes: line at %d ends at %d, want %d", len(b), s, sc.Ends[i], want)
		}
	}
}

// TestGateNonASCII checks that a gate for anchors that are not all ASCII finds their lines
// (every fingerprint of "äöüß" has bytes of 128 or more).
func TestGateNonASCII(t *testing.T) {
	anchors := []string{"Unauthorized", "äöüß"}
	ok := strings.Repeat("I1129 08:00:00 x.go:1] ok\n", 40)
	log := []byte(ok + "E1129 x.go:2] Zugriff äöüß verweigert\n" + ok)
	for name, g := range Variants(anchors, t.Logf) {
		if got, want := g.Lines(log, nil), naiveGate(g, log); !slices.Equal(got, want) || len(want) != 1 {
			t.Errorf("%s: Gate %v, want %v", name, got, want)
		}
	}
	g := NewGate(anchors)
	if got, want := g.Lines(log, nil), naiveGate(g, log); !slices.Equal(got, want) {
		t.Errorf("NewGate: %v, want %v", got, want)
	}
}

// TestGateNUL checks the NUL report of every scan, with the NUL at every position of a block.
func TestGateNUL(t *testing.T) {
	b := []byte(strings.Repeat("I1129 08:00:00 x.go:1] Unauthorized request\n", 8))
	for name, g := range gateVariants(t) {
		var sc Scanned
		if g.Scan(b, &sc); sc.NUL {
			t.Errorf("%s: NUL reported in a clean block", name)
		}
		for i := range b {
			c := b[i]
			b[i] = 0
			if g.Scan(b, &sc); !sc.NUL {
				t.Fatalf("%s: NUL at %d of %d not reported", name, i, len(b))
			}
			b[i] = c
		}
	}
}

// TestLastNewline checks lastNewline against bytes.LastIndexByte with newlines, their
// neighbours in value and high bytes at every position of short slices.
func TestLastNewline(t *testing.T) {
	t.Parallel()
	for _, fill := range []byte{'x', 0, 0x0b, 0x09, 0x8a, 0xff} {
		for n := range 40 {
			b := bytes.Repeat([]byte{fill}, n)
			for i := range n + 1 {
				if i < n {
					b[i] = '\n'
				}
				for j := range n {
					c := b[j]
					if j != i {
						b[j] = 0x0b
					}
					if got, want := lastNewline(b), bytes.LastIndexByte(b, '\n'); got != want {
						t.Fatalf("%q: %d, want %d", b, got, want)
					}
					b[j] = c
				}
				if i < n {
					b[i] = fill
				}
			}
		}
	}
}

// TestGateASCII checks the SIMD scans' report of an all-ASCII block, with a byte of 128 or
// more at every position of blocks of several lengths; the other scans never claim one.
func TestGateASCII(t *testing.T) {
	line := "I1129 08:00:00 x.go:1] Unauthorized request\n"
	for name, g := range gateVariants(t) {
		for _, n := range []int{0, 1, 63, 66, 67, 68, 130, 64*6 + 5, len(line) * 9} {
			b := []byte(strings.Repeat(line, 10)[:n])
			var sc Scanned
			g.Scan(b, &sc)
			if want := name == "teddy-avx512" || name == "teddy-avx2"; sc.ASCII != want {
				t.Fatalf("%s: %d ASCII bytes: ascii %v, want %v", name, n, sc.ASCII, want)
			}
			for i := range b {
				for _, c := range []byte{0x80, 0xc3, 0xff} {
					old := b[i]
					b[i] = c
					if g.Scan(b, &sc); sc.ASCII {
						t.Fatalf("%s: byte %#x at %d of %d: reported ASCII", name, c, i, n)
					}
					b[i] = old
				}
			}
		}
	}
}
