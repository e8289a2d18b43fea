// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scan

import (
	"bytes"
	"testing"
)

// FuzzGate checks the gate against a plain search: every line holding an anchor is found.
func FuzzGate(f *testing.F) {
	f.Add([]byte("a\nxx Unable to authenticate yy\nUnauthorized\n\nfailed to renew lease z"))
	g := NewGate(catalogueAnchors())
	f.Fuzz(func(t *testing.T, b []byte) {
		got := map[int]bool{}
		for _, s := range g.Lines(b, nil) {
			got[s] = true
		}
		start := 0
		for _, line := range bytes.SplitAfter(b, []byte{'\n'}) {
			for _, a := range g.anchors {
				if bytes.Contains(line, []byte(a)) && !got[start] {
					t.Fatalf("line at %d holds %q but the gate missed it", start, a)
				}
			}
			start += len(line)
		}
		var sc Scanned
		g.Scan(b, &sc)
		checkEnds(t, b, &sc)
	})
}
