package redact

import (
	"regexp"
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

// naiveTokens is runTokens by a regular expression over the runs, every run split (naiveRedactRun).
func naiveTokens(s string) string {
	return runRE.ReplaceAllStringFunc(s, func(run string) string {
		r, _ := naiveRedactRun(run)
		return r
	})
}

var runRE = regexp.MustCompile(`[A-Za-z0-9_.-]+`)

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

// TestFastPaths checks containsFold and runTokens against their plain versions.
func TestFastPaths(t *testing.T) {
	t.Parallel()
	for _, s := range fastCases {
		checkFast(t, s)
	}
}

// FuzzFastPaths checks containsFold and runTokens against their plain versions on any text.
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
	if got, want := runTokens(s), naiveTokens(s); got != want {
		t.Fatalf("runTokens(%q) = %q, want %q", s, got, want)
	}
}
