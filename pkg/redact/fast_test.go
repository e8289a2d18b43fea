package redact

import (
	"strings"
	"testing"
)

// naiveContainsFold is containsFold's specification.
func naiveContainsFold(s, sub string) bool {
	return strings.Contains(strings.Map(func(r rune) rune {
		if r < 0x80 {
			return rune(byte(r) | 0x20)
		}
		return r
	}, s), sub)
}

// naiveTokens is Tokens without its checks that spare most texts and runs the split (a text
// without "e" or two dots, redactRun's dot and "ey"/"ew" test) and without the run-byte table.
func naiveTokens(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !isRunByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isRunByte(s[j]) {
			j++
		}
		if r, ok := naiveRedactRun(s[i:j]); ok {
			b.WriteString(s[last:i])
			b.WriteString(r)
			last = j
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// naiveRedactRun is redactRun as it was, splitting every run: redactRun must find the same
// tokens.
func naiveRedactRun(run string) (string, bool) {
	segs := strings.Split(run, ".")
	for k := 0; k+2 < len(segs); k++ {
		if _, _, ok := splitHeader(segs[k]); ok {
			if r, ok := redactRun(run); ok {
				return r, true
			}
			return "(redactRun missed a token)", true
		}
	}
	return run, false
}

var fastCases = []string{"", "pass", "PASS", "xPaSsword=1", "pas", "secre", "Secret", "a.b.c", "eyJhbGciOiJub25lIn0.eyJ.x",
	"xx eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig yy", "tokeneyJhbGciOiJIUzI1NiJ9.e30.sig.", "ew.a.b", "e.y.w",
	"pPpPaASSs", "sSECRET", "\xffpass\xff"}

// TestFastPaths checks containsFold and Tokens against their plain versions.
func TestFastPaths(t *testing.T) {
	t.Parallel()
	for _, s := range fastCases {
		checkFast(t, s)
	}
}

// FuzzFastPaths checks containsFold and Tokens against their plain versions on any text.
func FuzzFastPaths(f *testing.F) {
	for _, s := range fastCases {
		f.Add(s)
	}
	f.Fuzz(checkFast)
}

func checkFast(t *testing.T, s string) {
	for _, sub := range []string{"pass", "secret", "p", "ss"} {
		if got, want := containsFold(s, sub), naiveContainsFold(s, sub); got != want {
			t.Fatalf("containsFold(%q, %q) = %v, want %v", s, sub, got, want)
		}
	}
	if got, want := Tokens(s), naiveTokens(s); got != want {
		t.Fatalf("Tokens(%q) = %q, want %q", s, got, want)
	}
}
