// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package quoted

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzKeyOffsets checks the one-pass key search against strings.Index of every key.
func FuzzKeyOffsets(f *testing.F) {
	for _, s := range []string{`{"ts":1.5,"msg":"a","err":"b"}`, `{"msg":"\"msg\":x","message":"y"}`, `"""msg":`,
		`{"time":"t","host":"h","hostname":"hn"}`, `"ts"`, `{"level":"error","logger":"x","caller":"c.go:1"}`} {
		f.Add(s)
	}
	keys := []string{"msg", "message", "err", "error", "logger", "level", "caller", "host", "hostname", "ts", "time", ""}
	f.Fuzz(func(t *testing.T, line string) {
		off := make([]int, len(keys))
		KeyOffsets(line, keys, off)
		for i, k := range keys {
			if want := strings.Index(line, `"`+k+`":`); off[i] != want {
				t.Fatalf("%q in %q: at %d, want %d", k, line, off[i], want)
			}
		}
	})
}

// FuzzPrefix checks Prefix against strconv on every string strconv reads, and that its fast
// path answers only where strconv does, the same.
func FuzzPrefix(f *testing.F) {
	for _, s := range []string{`"a" b`, `"a\"b" c`, "\"a\nb\" c", `"\xff" x`, "`raw` x", `"cut`, `""`, `"µ" ok`,
		"\"a\nb\\\"c\" d", `"a\\b\"c\"" e`, `"a\n" f`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := strconv.QuotedPrefix(s)
		var want string
		if err == nil {
			want, err = strconv.Unquote(q)
		}
		if v, n, ok := simplePrefix(s); ok && (err != nil || v != want || n != len(q)) {
			t.Fatalf("%q: fast path %q %d, strconv %q %d (%v)", s, v, n, want, len(q), err)
		}
		if err != nil {
			return
		}
		val, rest, complete := Prefix(s)
		if val != want || rest != s[len(q):] || !complete {
			t.Fatalf("%q: %q %q %v, want %q %q", s, val, rest, complete, want, s[len(q):])
		}
	})
}

// FuzzQuoteOrEscape checks the two-scan search against strings.IndexAny.
func FuzzQuoteOrEscape(f *testing.F) {
	for _, s := range []string{``, `"`, `\\`, `a\\"b`, `ab"c\\`, `abc`, `{"log":"E1 \\"x\\" y"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := quoteOrEscape(s), strings.IndexAny(s, `"\\`); got != want {
			t.Fatalf("quoteOrEscape(%q) = %d, want %d", s, got, want)
		}
	})
}

// refBody is Body as it was written with a strings.Builder.
func refBody(s string) (val, rest string, complete bool) {
	if i := strings.IndexAny(s, `"\`); i >= 0 && s[i] == '"' {
		return s[:i], s[i+1:], true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		j := strings.IndexAny(s[i:], `"\`)
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		b.WriteString(s[i : i+j])
		i += j
		if s[i] == '"' {
			return b.String(), s[i+1:], true
		}
		if i+1 == len(s) {
			b.WriteByte(s[i])
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

// FuzzBody checks Body and a Scratch's Body against refBody, and that a Scratch's earlier
// values stay as they were until Reset.
func FuzzBody(f *testing.F) {
	for _, s := range []string{`a"b`, `a\"b"c`, `E1 \"x\" y\n","time":"t"}`, `\u00e9\ud800\u12"`, `cut\`, `\q\t"`, ``} {
		f.Add(s, `x\"y"`)
	}
	f.Fuzz(func(t *testing.T, s, s2 string) {
		var sc Scratch
		want, wantRest, wantDone := refBody(s)
		for _, body := range []func(string) (string, string, bool){Body, sc.Body} {
			if v, r, d := body(s); v != want || r != wantRest || d != wantDone {
				t.Fatalf("%q: %q %q %v, want %q %q %v", s, v, r, d, want, wantRest, wantDone)
			}
		}
		first, _, _ := sc.Body(s)
		for range 3 {
			sc.Body(s2)
		}
		if first != want {
			t.Fatalf("%q: a Scratch's value changed to %q before Reset", s, first)
		}
	})
}
