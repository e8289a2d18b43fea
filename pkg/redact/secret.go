// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Secret replaces every occurrence of secret in s with Marker, in whatever spelling s carries
// it: raw, percent-encoded (a URL or a form body), XML/HTML entities, also escaped twice
// (`&amp;lt;`, as a SOAP fault may echo an escaped login body), JSON or Go escapes — and any mix
// of them, character by character. A secret shorter than MinSecretLen runes cannot be cut out
// without mangling ordinary words (a one-letter password is in most sentences), so an s that
// contains one is replaced whole by Withheld.
func Secret(s, secret string) string {
	if secret == "" || s == "" {
		return s
	}
	short := utf8.RuneCountInString(secret) < MinSecretLen
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		end := matchFrom(s, i, secret)
		if end <= i {
			continue
		}
		if short {
			return Withheld
		}
		b.WriteString(s[last:i])
		b.WriteString(Marker)
		last = end
		i = end - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// Secrets applies Secret for each of secrets.
func Secrets(s string, secrets ...string) string {
	for _, sec := range secrets {
		s = Secret(s, sec)
	}
	return s
}

// matchFrom returns where a spelling of secret that starts at s[j] ends, or -1.
func matchFrom(s string, j int, secret string) int {
	if secret == "" {
		return j
	}
	r, n := utf8.DecodeRuneInString(secret)
	for _, e := range runeEnds(s, j, secret[:n], r) {
		if end := matchFrom(s, e, secret[n:]); end >= 0 {
			return end
		}
	}
	return -1
}

// runeEnds lists where each spelling of one character (raw bytes, rune r) starting at s[j] ends.
func runeEnds(s string, j int, raw string, r rune) []int {
	if j >= len(s) {
		return nil
	}
	var ends []int
	if strings.HasPrefix(s[j:], raw) {
		ends = append(ends, j+len(raw))
	}
	switch s[j] {
	case '%':
		if e := percentEnd(s, j, raw); e > 0 {
			ends = append(ends, e)
		}
	case '+':
		if r == ' ' {
			ends = append(ends, j+1)
		}
	case '&':
		if e := entityEnd(s, j+1, r); e > 0 {
			ends = append(ends, e)
		}
		if strings.HasPrefix(s[j:], "&amp;") {
			if e := entityEnd(s, j+5, r); e > 0 {
				ends = append(ends, e)
			}
		}
	case '\\':
		if e := backslashEnd(s, j+1, r); e > 0 {
			ends = append(ends, e)
		}
	}
	return ends
}

// percentEnd matches raw's bytes, each raw or as %XX (either case).
func percentEnd(s string, j int, raw string) int {
	for i := 0; i < len(raw); i++ {
		switch {
		case j+2 < len(s) && s[j] == '%' && hexByte(s[j+1:j+3]) == int(raw[i]):
			j += 3
		case j < len(s) && s[j] == raw[i]:
			j++
		default:
			return -1
		}
	}
	return j
}

var namedEntities = map[string]rune{"lt": '<', "gt": '>', "amp": '&', "quot": '"', "apos": '\''}

// entityEnd matches an entity body for r at s[j:] (after the '&'): "lt;", "#60;", "#x3C;".
func entityEnd(s string, j int, r rune) int {
	semi := strings.IndexByte(s[j:], ';')
	if semi < 1 || semi > 10 {
		return -1
	}
	body := s[j : j+semi]
	var got rune = -1
	switch {
	case strings.HasPrefix(body, "#x") || strings.HasPrefix(body, "#X"):
		if v, err := strconv.ParseInt(body[2:], 16, 32); err == nil {
			got = rune(v)
		}
	case strings.HasPrefix(body, "#"):
		if v, err := strconv.ParseInt(body[1:], 10, 32); err == nil {
			got = rune(v)
		}
	default:
		if v, ok := namedEntities[strings.ToLower(body)]; ok {
			got = v
		}
	}
	if got != r {
		return -1
	}
	return j + semi + 1
}

var simpleEscapes = map[byte]rune{'"': '"', '\\': '\\', '/': '/', '\'': '\'', 'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f'}

// backslashEnd matches a JSON or Go escape of r at s[j:] (after the backslash).
func backslashEnd(s string, j int, r rune) int {
	if j >= len(s) {
		return -1
	}
	if v, ok := simpleEscapes[s[j]]; ok {
		if v == r {
			return j + 1
		}
		return -1
	}
	width := map[byte]int{'u': 4, 'U': 8, 'x': 2}[s[j]]
	if width == 0 || j+1+width > len(s) {
		return -1
	}
	v, err := strconv.ParseUint(s[j+1:j+1+width], 16, 32)
	if err != nil || rune(v) != r {
		return -1
	}
	return j + 1 + width
}

func hexByte(h string) int {
	v, err := strconv.ParseUint(h, 16, 8)
	if err != nil {
		return -1
	}
	return int(v)
}
