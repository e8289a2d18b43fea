package logs

import (
	"bytes"
	"slices"
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs/cause"
	"github.com/credwatch/credwatch/pkg/logs/internal/loggen"
)

// naiveGate is the gate's specification: the starts of the lines that contain an anchor.
func naiveGate(g *gate, b []byte) []int {
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

// TestGateExact checks that the gate passes exactly the lines holding an anchor, on edge cases
// and on every short slice and a 1 MiB stretch of a generated log.
func TestGateExact(t *testing.T) {
	g := newGate(cause.Standalone(catalogue.Default()))
	var log bytes.Buffer
	if _, _, err := loggen.Write(&log, loggen.Options{Bytes: 1 << 20, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	cases := []string{"", "Unauthorized", "xUnauthorized", "Unauthorized\n", `"code":401`,
		"a\"code\":401\nUnauthorizedq", "Unable to authenticate\nUnable to authenticate", "\n\n\nInvalidLogin"}
	for _, c := range cases {
		if got, want := g.lines([]byte(c), nil), naiveGate(g, []byte(c)); !slices.Equal(got, want) {
			t.Errorf("%q: gate %v, want %v", c, got, want)
		}
	}
	d := log.Bytes()
	for off := 0; off+64 < len(d); off += 4099 {
		for n := 0; n < 64; n++ {
			if got, want := g.lines(d[off:off+n], nil), naiveGate(g, d[off:off+n]); !slices.Equal(got, want) {
				t.Fatalf("log[%d:%d]: gate %v, want %v", off, off+n, got, want)
			}
		}
	}
	if got, want := g.lines(d, nil), naiveGate(g, d); !slices.Equal(got, want) {
		t.Errorf("1 MiB log: gate passes %d lines, want %d", len(got), len(want))
	}
}
