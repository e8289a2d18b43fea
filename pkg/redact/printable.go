// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// NeedsQuote reports a character that must not reach a terminal raw: every control character
// but tab and newline (C0, ESC and so the start of every CSI and OSC sequence, NUL, a carriage
// return that would let a line overwrite itself, DEL, C1), and the invisible format characters
// that change how the text around them displays: the bidi embeddings, overrides and isolates
// (U+202A–U+202E, U+2066–U+2069, U+061C), zero-width characters and marks (U+200B–U+200F),
// the line and paragraph separators (U+2028, U+2029) and the byte-order mark (U+FEFF). A
// hostile issuer holding U+202E can display as another; one holding U+200B looks like its
// neighbour.
func NeedsQuote(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n'
	case r < 0x7f:
		return false
	case r <= 0x9f: // DEL and C1
		return true
	}
	switch {
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x061c, r == 0x2028, r == 0x2029, r == 0xfeff:
		return true
	}
	return false
}

// Printable is s with every character NeedsQuote reports, and every byte that is not UTF-8,
// written as a visible escape: \x1b, \x7f, \xff for bytes below 0x80 and bytes that are not
// UTF-8, \u009b, \u202e for the rest. Text without any is returned as it is. It is what the
// text writers (NewTextWriter, report's tables) apply; JSON and YAML documents are data and
// keep their encoders' escapes.
func Printable(s string) string {
	i := printableUpTo(s)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for s = s[i:]; len(s) > 0; {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r < 0x80 && NeedsQuote(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case NeedsQuote(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// printableUpTo is the length of the prefix of s that Printable leaves as it is.
func printableUpTo(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || NeedsQuote(r) {
			return i
		}
		i += n
	}
	return len(s)
}

// incompleteRune is how many bytes at the end of b begin a UTF-8 character that they do not
// finish (0 to 3): a writer that quotes holds them for the next write rather than quoting half a
// character as bytes that are not UTF-8.
func incompleteRune(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return 0
		}
		if c >= 0xc0 { // a leading byte
			if utf8.FullRune(b[len(b)-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}
