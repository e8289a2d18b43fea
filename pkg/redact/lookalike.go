// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// confusables are letters of other scripts that display as a Latin letter or digit: the
// homoglyphs a hostile issuer, audience or kid uses to pass for another.
var confusables = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'с': 'c', 'ԁ': 'd', 'е': 'e', 'һ': 'h', 'і': 'i', 'ј': 'j', 'к': 'k', 'ӏ': 'l', 'м': 'm',
	'н': 'h', 'о': 'o', 'р': 'p', 'ԛ': 'q', 'ѕ': 's', 'т': 't', 'ս': 'u', 'ѵ': 'v', 'ԝ': 'w', 'х': 'x', 'у': 'y',
	'А': 'A', 'В': 'B', 'С': 'C', 'Е': 'E', 'Н': 'H', 'І': 'I', 'Ј': 'J', 'К': 'K', 'М': 'M', 'О': 'O', 'Р': 'P',
	'Ѕ': 'S', 'Т': 'T', 'Х': 'X', 'Ү': 'Y',
	// Greek
	'α': 'a', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T',
	'Χ': 'X', 'Υ': 'Y', 'Ζ': 'Z',
	// others
	'ℓ': 'l', 'ı': 'i', '０': '0', '１': '1', '．': '.', '／': '/', '：': ':', '‐': '-', '‑': '-', '–': '-',
}

// skeleton is s as it displays: the characters NeedsQuote reports (invisible or control) left
// out, and homoglyphs read as the Latin letter they pass for.
func skeleton(s string) string {
	var b strings.Builder
	for _, r := range s {
		if NeedsQuote(r) {
			continue
		}
		if c, ok := confusables[r]; ok {
			r = c
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Lookalike is, for two strings that differ but display alike (only by a homoglyph, an
// invisible or a control character), where they first differ: "differ at byte 9 (U+0430 vs
// 'a')", so that a verdict comparing them does not print two identical-looking strings as
// the reason. It is "" for equal strings and for strings that look different.
func Lookalike(a, b string) string {
	if a == b || skeleton(a) != skeleton(b) {
		return ""
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	// Back to the start of the character the difference is in.
	for i > 0 && (i < len(a) && !utf8.RuneStart(a[i]) || i < len(b) && !utf8.RuneStart(b[i])) {
		i--
	}
	return fmt.Sprintf("differ at byte %d (%s vs %s)", i, runeAt(a, i), runeAt(b, i))
}

// LookalikeIn is Lookalike of a and the first of bs that looks like it, with both quoted:
// `"https://kubernetes.default.svc" and "https://kubernetes.default.svc" differ at byte 14
// (U+200B vs '.')`; "" when none does.
func LookalikeIn(a string, bs ...string) string {
	for _, b := range bs {
		if d := Lookalike(a, b); d != "" {
			return fmt.Sprintf("%q and %q %s", a, b, d)
		}
	}
	return ""
}

// runeAt names the character of s at byte i: 'a' for printable ASCII, U+0430 for the rest.
func runeAt(s string, i int) string {
	if i >= len(s) {
		return "the end"
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == utf8.RuneError && n == 1:
		return fmt.Sprintf("byte 0x%02x", s[i])
	case r >= 0x20 && r < 0x7f:
		return fmt.Sprintf("'%c'", r)
	}
	return fmt.Sprintf("U+%04X", r)
}
