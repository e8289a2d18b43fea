// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package quoted reads the quoted strings of log lines: Go-quoted klog values and JSON strings,
// including ones cut off before their closing quote.
package quoted

import (
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Prefix reads a Go-quoted string at the start of s. A string cut off before its closing
// quote is unescaped as far as it goes and reported incomplete.
func Prefix(s string) (val, rest string, complete bool) {
	if v, n, ok := simplePrefix(s); ok {
		return v, s[n:], true
	}
	if q, err := strconv.QuotedPrefix(s); err == nil {
		if v, err := strconv.Unquote(q); err == nil {
			return v, s[len(q):], true
		}
	}
	return Body(s[1:])
}

// simplePrefix is Prefix's fast path for the common cases, answering what strconv answers
// without its rune-by-rune decoding: a double-quoted string whose only escapes are \" and \\
// (klog quoting an error that quotes something), with no newline and valid UTF-8. n is the length
// of the quoted string; ok is false when strconv must decide.
func simplePrefix(s string) (val string, n int, ok bool) {
	if len(s) == 0 || s[0] != '"' {
		return "", 0, false
	}
	var b strings.Builder // the unescaped body, once an escape is seen
	from := 1             // s[from:i] is not yet copied into b
	for i := 1; i < len(s); i++ {
		j := quoteOrEscape(s[i:])
		if j < 0 {
			break
		}
		i += j
		switch s[i] {
		case '"':
			// The escapes are ASCII: the raw string is valid UTF-8 when the body is.
			if raw := s[1:i]; strings.IndexByte(raw, '\n') >= 0 || !utf8.ValidString(raw) {
				return "", 0, false
			}
			if b.Cap() == 0 {
				return s[1:i], i + 1, true
			}
			b.WriteString(s[from:i])
			return b.String(), i + 1, true
		case '\\':
			if i+1 == len(s) || s[i+1] != '"' && s[i+1] != '\\' {
				return "", 0, false
			}
			if b.Cap() == 0 {
				b.Grow(min(len(s), 512))
			}
			b.WriteString(s[from:i])
			b.WriteByte(s[i+1])
			i++
			from = i + 1
		}
	}
	return "", 0, false
}

// Body unescapes the body of a quoted string (Go or JSON escapes) up to its closing
// quote; a body cut off before the quote is decoded as far as it goes and reported incomplete.
func Body(s string) (val, rest string, complete bool) {
	// Fast path: no escape before the closing quote.
	if i := quoteOrEscape(s); i >= 0 && s[i] == '"' {
		return s[:i], s[i+1:], true
	}
	b, rest, complete := bodyAppend(make([]byte, 0, len(s)), s)
	return unsafe.String(unsafe.SliceData(b), len(b)), rest, complete
}

// Scratch holds unescaped values for a while: the values its Body returns stay valid until
// Reset, so a caller that keeps one past that must copy it. A nil Scratch is quoted.Body.
type Scratch struct{ buf []byte }

// Reset lets the Scratch reuse its space: the values it returned may change.
func (sc *Scratch) Reset() { sc.buf = sc.buf[:0] }

// scratchSize is the least a Scratch allocates at once.
const scratchSize = 256 << 10

// Body is quoted.Body with the unescaped value in sc's space.
func (sc *Scratch) Body(s string) (val, rest string, complete bool) {
	if i := quoteOrEscape(s); sc == nil || i >= 0 && s[i] == '"' {
		return Body(s)
	}
	// An unescaped value is never longer than its escaped text, so b stays in sc.buf.
	if cap(sc.buf)-len(sc.buf) < len(s) {
		sc.buf = make([]byte, 0, max(scratchSize, len(s)))
	}
	start := len(sc.buf)
	b, rest, complete := bodyAppend(sc.buf, s)
	sc.buf = b
	return unsafe.String(unsafe.SliceData(b[start:]), len(b)-start), rest, complete
}

// bodyAppend appends Body's value to b (no longer than s).
func bodyAppend(b []byte, s string) ([]byte, string, bool) {
	for i := 0; i < len(s); i++ {
		j := quoteOrEscape(s[i:])
		if j < 0 {
			b = append(b, s[i:]...)
			break
		}
		b = append(b, s[i:i+j]...)
		i += j
		c := s[i]
		if c == '"' {
			return b, s[i+1:], true
		}
		if i+1 == len(s) {
			b = append(b, c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'u':
			if i+4 < len(s) {
				if n, err := strconv.ParseUint(s[i+1:i+5], 16, 32); err == nil {
					b = utf8.AppendRune(b, rune(n))
					i += 4
					continue
				}
			}
			b = append(b, 'u')
		default:
			b = append(b, s[i])
		}
	}
	return b, "", false
}

// quoteOrEscape is strings.IndexAny(s, `"\\`) without building the set at every call: the first
// quote, unless a backslash comes before it (two vectorised scans, not one byte at a time).
func quoteOrEscape(s string) int {
	q := strings.IndexByte(s, '"')
	before := s
	if q >= 0 {
		before = s[:q]
	}
	if e := strings.IndexByte(before, '\\'); e >= 0 {
		return e
	}
	return q
}

// JSONField finds "key":"value" and returns value unescaped, possibly cut off.
func JSONField(line, key string) (string, bool) {
	off := [1]int{}
	KeyOffsets(line, []string{key}, off[:])
	return ValueAt(line, key, off[0])
}

// KeyOffsets sets off[i] to the index of the first `"keys[i]":` in line, or -1, in one pass
// over the line's quotes.
func KeyOffsets(line string, keys []string, off []int) {
	for i := range off {
		off[i] = -1
	}
	left := len(keys)
	for q := strings.IndexByte(line, '"'); q >= 0 && left > 0; {
		rest := line[q+1:]
		for i, k := range keys {
			if off[i] < 0 && len(rest) > len(k)+1 && rest[len(k)] == '"' && rest[len(k)+1] == ':' && rest[:len(k)] == k {
				off[i] = q
				left--
			}
		}
		j := strings.IndexByte(rest, '"')
		if j < 0 {
			break
		}
		q += 1 + j
	}
}

// ValueAt is JSONField's answer for key when `"key":` starts at off (-1: absent).
func ValueAt(line, key string, off int) (string, bool) {
	return (*Scratch)(nil).ValueAt(line, key, off)
}

// ValueAt is quoted.ValueAt with an unescaped value in sc's space.
func (sc *Scratch) ValueAt(line, key string, off int) (string, bool) {
	if off < 0 {
		return "", false
	}
	s := strings.TrimLeft(line[off+len(key)+3:], " ")
	if !strings.HasPrefix(s, `"`) {
		return "", false
	}
	v, _, _ := sc.Body(s[1:])
	return v, true
}
