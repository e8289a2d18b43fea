// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"encoding/base64"
	"regexp"
	"sort"
	"strings"
)

// edit replaces s[lo:hi] with repl.
type edit struct {
	lo, hi int
	repl   string
}

// apply makes the edits (sorted here, overlapping ones dropped) to s.
func apply(s string, edits []edit) string {
	if len(edits) == 0 {
		return s
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].lo < edits[j].lo })
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, e := range edits {
		if e.lo < last {
			continue
		}
		b.WriteString(s[last:e.lo])
		b.WriteString(e.repl)
		last = e.hi
	}
	b.WriteString(s[last:])
	return b.String()
}

// escapedTokenRE is a run of base64url segments joined by dots of which at least one is spelt
// %2E or \u002e (a token in a URL query or a JSON-escaped string).
var (
	escapedTokenRE = regexp.MustCompile(`[A-Za-z0-9_-]{8,}(?:(?:%2[eE]|\\u002[eE]|\.)[A-Za-z0-9_-]*){2,}`)
	escapedDotRE   = regexp.MustCompile(`%2[eE]|\\u002[eE]|\.`)
)

// escapedTokens is runTokens for tokens whose dots are escaped.
func escapedTokens(s string) string {
	if !containsFold(s, "%2e") && !containsFold(s, `\u002e`) || !strings.Contains(s, "eyJ") {
		return s
	}
	var edits []edit
	for _, m := range escapedTokenRE.FindAllStringIndex(s, -1) {
		run := s[m[0]:m[1]]
		if !containsFold(run, "%2e") && !containsFold(run, `\u002e`) {
			continue // runTokens saw it
		}
		dots := escapedDotRE.FindAllStringIndex(run, -1)
		// segment k runs from the end of dot k-1 to the start of dot k.
		seg := func(k int) string {
			lo, hi := 0, len(run)
			if k > 0 {
				lo = dots[k-1][1]
			}
			if k < len(dots) {
				hi = dots[k][0]
			}
			return run[lo:hi]
		}
		for k := 0; k+1 < len(dots); k++ {
			if _, _, ok := splitHeader(seg(k)); !ok {
				continue
			}
			keep := dots[k] // the header and the dot after it stay
			if strings.HasPrefix(seg(k+1), "eyJ") && k+2 < len(dots) {
				keep = dots[k+1]
			}
			edits = append(edits, edit{m[0] + keep[1], m[1], Marker})
			break
		}
	}
	return apply(s, edits)
}

// brokenTokens redacts tokens broken over two lines: a run holding a JOSE header (already cut
// after it by runTokens, or ending in a dot or a partial segment) that ends a line, and the run
// that starts the next line, which holds the rest of its signature.
func brokenTokens(s string) string {
	if !strings.Contains(s, "ey") || !strings.Contains(s, "\n") && !strings.Contains(s, `\n`) {
		return s
	}
	var edits []edit
	nl, bs := -1, -1 // the next '\n' and '\\' from i on (len(s) when there is none)
	for i := 0; i < len(s); {
		// Two IndexBytes, each remembered, are much faster than IndexAny: a report is
		// megabytes of lines, and JSON escapes quotes with backslashes.
		if nl < i {
			nl = indexFrom(s, '\n', i)
		}
		if bs < i {
			bs = indexFrom(s, '\\', i)
		}
		b := min(nl, bs)
		if b >= len(s) {
			break
		}
		// The line break at s[b] (a real one, or one escaped in a JSON or Go string): "\r\n" or "\n" at a '\n',
		// `\r\n` or `\n` at a '\\'.
		brk := ""
		switch {
		case s[b] == '\n' && b > 0 && s[b-1] == '\r':
			brk, b = "\r\n", b-1
		case s[b] == '\n':
			brk = "\n"
		case strings.HasPrefix(s[b:], `\r\n`):
			brk = `\r\n`
		case strings.HasPrefix(s[b:], `\n`):
			brk = `\n`
		}
		if brk == "" {
			i = b + 1
			continue
		}
		i = b + len(brk)
		if b == 0 || !runByte[s[b-1]] || i == len(s) || !runByte[s[i]] {
			continue // most lines end in a quote, a comma or a brace
		}
		lo := b
		for lo > 0 && runByte[s[lo-1]] {
			lo--
		}
		hi := i
		for hi < len(s) && runByte[s[hi]] {
			hi++
		}
		head, next := s[lo:b], s[i:hi]
		if repl, ok := brokenHead(head, next); ok {
			if repl != head {
				edits = append(edits, edit{lo, b, repl})
			}
			edits = append(edits, edit{i, hi, Marker})
			i = hi
		} else if brokenInHeader(head, next) {
			edits = append(edits, edit{i, hi, Marker})
			i = hi
		}
	}
	return apply(s, edits)
}

// brokenHead says whether head, which ends a line, is the start of a token that next, which
// starts the following line, continues, and how head is redacted.
func brokenHead(head, next string) (string, bool) {
	if strings.HasSuffix(strings.TrimRight(head, "."), "."+Marker) {
		// runTokens cut a whole token: next may be the rest of its signature, if it looks like
		// base64 rather than a word.
		return head, randomLooking(next)
	}
	segs := strings.Split(head, ".")
	for k, sg := range segs {
		prefix, hdr, ok := splitHeader(sg)
		if !ok {
			continue
		}
		if k == len(segs)-1 && !strings.HasPrefix(next, ".") {
			return "", false // a header alone ends the line and nothing continues it with a dot
		}
		return strings.Join(append(append([]string{}, segs[:k]...), prefix+hdr), ".") + "." + Marker, true
	}
	return "", false
}

// brokenInHeader says whether head and next, which end a line and start the next, are a token
// broken before its header's dot: the header and claims the lines hold are not secret, but
// next holds the signature.
func brokenInHeader(head, next string) bool {
	if !strings.Contains(head, "ey") && !strings.HasPrefix(next, "y") {
		return false
	}
	_, ok := redactRun(head + next)
	return ok
}

// randomLooking says whether run looks like a piece of base64 rather than a word: a digit, '-'
// or '_', or upper case after its first letter.
func randomLooking(run string) bool {
	if len(run) < 4 {
		return false
	}
	for i := 0; i < len(run); i++ {
		c := run[i]
		if c >= '0' && c <= '9' || c == '-' || c == '_' || i > 0 && c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}

// wrappedGuards are in the standard base64 of "eyJ" (a JOSE header) and "-----" (a PEM block)
// at each of the three alignments.
var wrappedGuards = []string{"ZXlK", "V5S", "leU", "LS0t"}

// Wrapped replaces whole every standard (or URL-safe) base64 run that decodes to text holding a
// secret Text finds: a token in a dockerconfig or kubeconfig blob, a base64 private key.
func Wrapped(s string) string {
	var edits []edit
	var seen map[int]bool // the runs looked at, by start
	for _, g := range wrappedGuards {
		for i := 0; ; {
			j := strings.Index(s[i:], g)
			if j < 0 {
				break
			}
			p := i + j
			lo, hi := p, p
			for lo > 0 && b64Byte[s[lo-1]] && s[lo-1] != '=' { // padding only ends a run
				lo--
			}
			for hi < len(s) && b64Byte[s[hi]] && s[hi] != '=' {
				hi++
			}
			for k := 0; k < 2 && hi < len(s) && s[hi] == '='; k++ {
				hi++
			}
			i = hi
			if hi-lo < 16 || seen[lo] {
				continue
			}
			if seen == nil {
				seen = map[int]bool{}
			}
			seen[lo] = true
			if holdsSecret(s[lo:hi]) {
				edits = append(edits, edit{lo, hi, Marker})
			}
		}
	}
	return apply(s, edits)
}

// holdsSecret says whether run, base64 at any of its alignments, decodes to text Text changes.
func holdsSecret(run string) bool {
	run = strings.TrimRight(run, "=")
	for off := 0; off < 4 && len(run)-off >= 16; off++ {
		r := run[off:]
		if len(r)%4 == 1 {
			r = r[:len(r)-1]
		}
		enc := base64.RawStdEncoding
		if strings.ContainsAny(r, "-_") {
			enc = base64.RawURLEncoding
		}
		d, err := enc.DecodeString(r)
		if err != nil {
			continue
		}
		if t := string(d); Text(t) != t {
			return true
		}
	}
	return false
}

// b64Byte is the standard and URL-safe base64 alphabets with padding, by byte.
var b64Byte = func() (t [256]bool) {
	for c := range t {
		t[c] = isRunByte(byte(c)) && c != '.' || c == '+' || c == '/' || c == '='
	}
	return t
}()

// BrokenTail is, for a line that follows prev, the length of the run of base64url characters
// that starts line and finishes a token broken at the end of prev, or 0: what Text takes out of
// the second of two lines (brokenTokens) for a caller that redacts one line at a time, such as
// the logs evidence. prev is the previous line as read, not yet redacted.
func BrokenTail(prev, line string) int {
	prev = strings.TrimRight(prev, "\r")
	lo := len(prev)
	for lo > 0 && runByte[prev[lo-1]] {
		lo--
	}
	hi := 0
	for hi < len(line) && runByte[line[hi]] {
		hi++
	}
	if lo == len(prev) || hi == 0 {
		return 0
	}
	if head := prev[lo:]; !strings.Contains(head, "ey") && !strings.Contains(head, "ew") && !strings.Contains(head, Marker) && line[0] != 'y' {
		return 0 // no header, no cut token, and no "eyJ" cut after its 'e': most lines end in words
	}
	if _, ok := brokenHead(runTokens(prev[lo:]), line[:hi]); ok || brokenInHeader(prev[lo:], line[:hi]) {
		return hi
	}
	return 0
}
