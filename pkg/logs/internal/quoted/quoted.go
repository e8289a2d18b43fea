// Package quoted reads the quoted strings of log lines: Go-quoted klog values and JSON strings,
// including ones cut off before their closing quote.
package quoted

import (
	"strconv"
	"strings"
)

// Prefix reads a Go-quoted string at the start of s. A string cut off before its closing
// quote is unescaped as far as it goes and reported incomplete.
func Prefix(s string) (val, rest string, complete bool) {
	if q, err := strconv.QuotedPrefix(s); err == nil {
		if v, err := strconv.Unquote(q); err == nil {
			return v, s[len(q):], true
		}
	}
	return Body(s[1:])
}

// Body unescapes the body of a quoted string (Go or JSON escapes) up to its closing
// quote; a body cut off before the quote is decoded as far as it goes and reported incomplete.
func Body(s string) (val, rest string, complete bool) {
	// Fast path: no escape before the closing quote.
	if i := strings.IndexAny(s, `"\\`); i >= 0 && s[i] == '"' {
		return s[:i], s[i+1:], true
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		j := strings.IndexAny(s[i:], `"\\`)
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		b.WriteString(s[i : i+j])
		i += j
		c := s[i]
		if c == '"' {
			return b.String(), s[i+1:], true
		}
		if i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'u':
			if i+4 < len(s) {
				if n, err := strconv.ParseUint(s[i+1:i+5], 16, 32); err == nil {
					b.WriteRune(rune(n))
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), "", false
}

// JSONField finds "key":"value" and returns value unescaped, possibly cut off.
func JSONField(line, key string) (string, bool) {
	k := `"` + key + `":`
	i := strings.Index(line, k)
	if i < 0 {
		return "", false
	}
	s := strings.TrimLeft(line[i+len(k):], " ")
	if !strings.HasPrefix(s, `"`) {
		return "", false
	}
	v, _, _ := Body(s[1:])
	return v, true
}
