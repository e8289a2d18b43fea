// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"strings"
	"testing"
)

// TestBrokenTail: a caller that redacts line by line, with BrokenTail, takes out what Text
// takes out of the two lines together.
func TestBrokenTail(t *testing.T) {
	t.Parallel()
	tok := jws
	for cut := 1; cut < len(tok); cut++ {
		prev, line := "Authorization: Bearer "+tok[:cut], tok[cut:]+` err="invalid bearer token"`
		whole := Text(prev + "\n" + line)
		_, want, _ := strings.Cut(whole, "\n")
		got := line
		if n := BrokenTail(prev, line); n > 0 {
			got = Marker + line[n:]
		}
		got = Text(got)
		if got != want {
			t.Errorf("cut at %d: line by line %q, want %q (as Text of both)", cut, got, want)
		}
		for i := 0; i+8 <= len(sig); i++ {
			if strings.Contains(Text(prev)+"\n"+got, sig[i:i+8]) {
				t.Errorf("cut at %d: the signature's %q survives in %q / %q", cut, sig[i:i+8], Text(prev), got)
				break
			}
		}
	}
	for _, c := range [][2]string{{"", "x"}, {"token expired", "abc"}, {"eyJhbGciOiJub25lIn0", "rest"}, {"a.b.c", "d1e2f3"}} {
		if n := BrokenTail(c[0], c[1]); n != 0 {
			t.Errorf("BrokenTail(%q, %q) = %d, want 0", c[0], c[1], n)
		}
	}
}
