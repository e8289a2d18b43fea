// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"encoding/base64"
	"strings"
)

// Tokens keeps the header (and a JWS's JSON payload) of every JOSE compact token in s and
// replaces the rest with Marker: a run of base64url segments joined by dots, at least three of
// them, whose first segment decodes to a JSON header naming "alg". Whatever character follows
// the run (a full stop, a comma, a quote) plays no part, and runs of any length (JWS has 3
// segments, JWE 5) are cut after the header, so no signature or ciphertext survives. Dots spelt
// %2E or \u002e count as dots, and a token broken at the end of a line loses the run that
// continues it on the next (escapes.go).
func Tokens(s string) string { return brokenTokens(escapedTokens(runTokens(s))) }

// runTokens is Tokens for tokens whose dots are dots, each on one line.
func runTokens(s string) string {
	if !strings.Contains(s, "e") || strings.Count(s, ".") < 2 {
		return s
	}
	// Only a run with a dot can hold a token: the runs are found around the dots, which
	// IndexByte finds fast (a printed report is megabytes of text with few of them).
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		d := strings.IndexByte(s[i:], '.')
		if d < 0 {
			break
		}
		lo, hi := i+d, i+d+1
		for lo > i && runByte[s[lo-1]] { // s[i-1], if any, ends the previous run
			lo--
		}
		for hi < len(s) && runByte[s[hi]] {
			hi++
		}
		if r, ok := redactRun(s[lo:hi]); ok {
			b.WriteString(s[last:lo])
			b.WriteString(r)
			last = hi
		}
		i = hi
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// redactRun redacts one run of [A-Za-z0-9_.-]; ok is false when it holds no token.
func redactRun(run string) (string, bool) {
	// A token has three segments, and a header starts "ey" or "ew" (isHeader): most runs are
	// words, numbers or names, told apart here without splitting them.
	if strings.Count(run, ".") < 2 || !strings.Contains(run, "ey") && !strings.Contains(run, "ew") {
		return run, false
	}
	segs := strings.Split(run, ".")
	for k := 0; k+2 < len(segs); k++ {
		prefix, hdr, ok := splitHeader(segs[k])
		if !ok {
			continue
		}
		keep := append(append([]string{}, segs[:k]...), prefix+hdr)
		rest := segs[k+1:]
		if strings.HasPrefix(rest[0], "eyJ") { // a JWS's JSON claims: not secret, and useful
			keep, rest = append(keep, rest[0]), rest[1:]
		}
		// A token ends at its last non-empty segment; trailing dots are the sentence's.
		trail := 0
		for trail < len(rest) && rest[len(rest)-1-trail] == "" {
			trail++
		}
		return strings.Join(keep, ".") + "." + Marker + strings.Repeat(".", trail), true
	}
	return run, false
}

// splitHeader finds a JOSE header in seg, also behind other base64url characters glued to it
// ("token" + "eyJ...").
func splitHeader(seg string) (prefix, hdr string, ok bool) {
	if isHeader(seg) {
		return "", seg, true
	}
	for i := 1; i < len(seg); i++ {
		j := strings.Index(seg[i:], "eyJ")
		if j < 0 {
			break
		}
		i += j
		if isHeader(seg[i:]) {
			return seg[:i], seg[i:], true
		}
	}
	return "", seg, false
}

// isHeader says whether seg is the base64url of a JOSE header: a JSON object naming "alg".
func isHeader(seg string) bool {
	// '{' then '"', ' ' or a control character spells "ey" or "ew": most words fail here.
	if len(seg) < 8 || seg[0] != 'e' || seg[1] != 'y' && seg[1] != 'w' {
		return false
	}
	if len(seg)%4 == 1 {
		seg = seg[:len(seg)-1]
	}
	d, err := base64.RawURLEncoding.DecodeString(seg)
	return err == nil && len(d) > 0 && d[0] == '{' && strings.Contains(string(d), `"alg"`)
}

func isRunByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

// runByte is isRunByte by byte.
var runByte = func() (t [256]bool) {
	for c := range t {
		t[c] = isRunByte(byte(c))
	}
	return t
}()
