// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/redact/redacttest"
)

// TestPrintable: every hostile spelling is quoted, text people write (tabs, newlines, accents,
// CJK, arrows, a homoglyph that is a letter) is kept.
func TestPrintable(t *testing.T) {
	for _, h := range redacttest.HostileText {
		if got := redact.Printable(h.Raw); got != h.Quoted {
			t.Errorf("%s: Printable(%q) = %q, want %q", h.Name, h.Raw, got, h.Quoted)
		}
	}
	for _, s := range []string{"", "plain", "a\tb\nc", "café 日本 ✓ ↓ → \ufffd", "https://kubernetes.default.svc"} {
		if got := redact.Printable(s); got != s {
			t.Errorf("Printable(%q) = %q, want it unchanged", s, got)
		}
	}
}

// TestTextWriter: a text writer quotes every hostile spelling, in one write or in a forced write
// cut at any byte (a character cut between two writes is held, not quoted as bytes), while the
// plain writer passes it on as it is; Control writes the owner's own sequence raw, in order.
func TestTextWriter(t *testing.T) {
	for _, h := range redacttest.HostileText {
		line := "issuer " + h.Raw + " ↓\n"
		want := "issuer " + h.Quoted + " ↓\n"
		var whole, split, plain bytes.Buffer
		w := redact.NewTextWriter(&whole, nil)
		_, _ = w.Write([]byte(line))
		_ = w.Flush()
		for k := 1; k < len(line); k++ {
			// a write holding a '\r' goes on at once (a progress bar), even cut in a character
			sw := redact.NewTextWriter(&split, nil)
			_, _ = sw.Write([]byte("\r" + line[:k]))
			_, _ = sw.Write([]byte(line[k:]))
			_ = sw.Flush()
			if got, want := split.String(), `\x0d`+want; got != want {
				t.Errorf("%s: text writer, cut at %d, wrote %q, want %q", h.Name, k, got, want)
				break
			}
			split.Reset()
		}
		pw := redact.NewWriter(&plain, nil)
		_, _ = pw.Write([]byte(line))
		_ = pw.Flush()
		if whole.String() != want {
			t.Errorf("%s: text writer wrote %q, want %q", h.Name, whole.String(), want)
		}
		if plain.String() != line {
			t.Errorf("%s: plain writer wrote %q, want it as it is", h.Name, plain.String())
		}
	}
	var b bytes.Buffer
	w := redact.NewTextWriter(&b, nil)
	_, _ = w.Write([]byte("held \x1b"))
	if err := redact.Control(w, "\r\x1b[K"); err != nil {
		t.Fatal(err)
	}
	if want := `held \x1b` + "\r\x1b[K"; b.String() != want {
		t.Errorf("Control wrote %q, want %q", b.String(), want)
	}
}

// FuzzPrintable: whatever the input, Printable's output is UTF-8 holding nothing NeedsQuote
// reports, and input that needs no quoting comes back as it is.
func FuzzPrintable(f *testing.F) {
	for _, h := range redacttest.HostileText {
		f.Add(h.Raw)
	}
	f.Add("café\t日本\n")
	f.Fuzz(func(t *testing.T, s string) {
		p := redact.Printable(s)
		if !utf8.ValidString(p) || strings.ContainsFunc(p, redact.NeedsQuote) {
			t.Fatalf("Printable(%q) = %q", s, p)
		}
		if utf8.ValidString(s) && !strings.ContainsFunc(s, redact.NeedsQuote) && p != s {
			t.Fatalf("Printable(%q) = %q, want it unchanged", s, p)
		}
	})
}
