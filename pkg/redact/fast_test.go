// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"regexp"
	"strings"
	"testing"
)

// naiveContainsFold is containsFold's specification.
func naiveContainsFold(s, sub string) bool {
	return strings.Contains(strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 0x20
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
	"pPpPaASSs", "sSECRET", "\xffpass\xff", "x%2E%2e", `\U002E`, "&LT;/",
	`{"password": "password": "abcdef12"}`, "pass=pass=x", `token%22%3A%22x`, `x\u0022token\u0022:1`, "api_key &#34; : y",
	"Basic dXNlcjpwYXNz bearer Bearer abcdefgh1 basic", "BEARER\n  xyz12345678 Basic%20dTpw"}

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
	for _, sub := range []string{"pass", "secret", "p", "ss", "%2e", `\u002e`, "&lt;/"} {
		if got, want := containsFold(s, sub), naiveContainsFold(s, sub); got != want {
			t.Fatalf("containsFold(%q, %q) = %v, want %v", s, sub, got, want)
		}
	}
	for _, sub := range []string{"password", "&quot;", `\u0022`, "%3d", s} {
		for _, x := range []string{s, strings.ToUpper(s), "k" + s} {
			if len(x) >= len(sub) && isASCII(sub) {
				if got, want := hasPrefixFold(x, sub), strings.EqualFold(x[:len(sub)], sub); got != want {
					t.Fatalf("hasPrefixFold(%q, %q) = %v, want %v", x, sub, got, want)
				}
			}
		}
	}
	if got, want := AuthValues(s), naiveAuthValues(s); got != want {
		t.Fatalf("AuthValues(%q) = %q, want %q", s, got, want)
	}
	if got, want := KeyValues(s), naiveKeyValues(s); got != want {
		t.Fatalf("KeyValues(%q) = %q, want %q", s, got, want)
	}
	if got, want := runTokens(s), naiveTokens(s); got != want {
		t.Fatalf("runTokens(%q) = %q, want %q", s, got, want)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// naiveKeyValues is KeyValues as it was, a scan for each key word: KeyValues must do the same.
// It replaces the value of every credential key in s with Marker (see the package doc):
// `password=…`, `"client_secret": "…"`, `X-Auth-Token: …`, `token=…`, `%22password%22%3A%22…%22`.
func naiveKeyValues(s string) string {
	var edits []edit
	for _, w := range keyWords {
		f := newFolds(s, w)
		for i := 0; i < len(s); {
			p := f.next(i)
			if p < 0 {
				break
			}
			ks, ke := p, p+len(w)
			for ks > 0 && keyByte[s[ks-1]] {
				ks--
			}
			for ke < len(s) && keyByte[s[ke]] {
				ke++
			}
			i = ke
			if !sepAt(s, ke) {
				continue // most mentions are words in prose or names
			}
			if vs, ve, ok := keyValue(s, ks, ke); ok {
				edits = append(edits, edit{vs, ve, Marker})
				i = ve
			}
		}
	}
	return apply(s, edits)
}

// naiveAuthValues is AuthValues as it was, a scan for each scheme: AuthValues must do the same.
func naiveAuthValues(s string) string {
	if !containsFold(s, "basic") && !containsFold(s, "bearer") {
		return s
	}
	var edits []edit
	for _, scheme := range []string{"basic", "bearer"} {
		f := newFolds(s, scheme)
		for i := 0; ; {
			p := f.next(i)
			if p < 0 {
				break
			}
			i = p + len(scheme)
			if p > 0 && keyByte[s[p-1]] {
				continue // part of a word
			}
			if vs, ve, ok := schemeValue(s, scheme, i); ok {
				edits = append(edits, edit{vs, ve, Marker})
				i = ve
			}
		}
	}
	return apply(s, edits)
}
