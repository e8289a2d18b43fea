// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// writeTable renders t for a terminal. Tables carry untrusted text (log lines, cloud configs,
// token claims), and a raw escape sequence in a cell would reach the terminal: it could move
// the cursor, rewrite earlier lines, retitle the window or hide what follows. Every control
// character but tab and newline (C0, ESC among them, DEL, C1) and every byte that is not UTF-8
// is written as a visible escape instead: \x1b, \x7f, \u009b, \xff. JSON and YAML escape such
// characters already. Rows holding one are wider than their column, which only they pay for.
func writeTable(w *bytes.Buffer, t Tabular, o TableOptions) error {
	start := w.Len()
	if err := t.WriteTable(w, o); err != nil {
		return err
	}
	out := w.Bytes()[start:]
	i := bytes.IndexFunc(out, func(r rune) bool { return r == utf8.RuneError || needsEscape(r) })
	if i < 0 {
		return nil
	}
	escaped := escapeControls(append([]byte(nil), out[i:]...))
	w.Truncate(start + i)
	w.Write(escaped)
	return nil
}

// needsEscape reports a control character a table must not print raw.
func needsEscape(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f
}

// escapeControls returns b with what needsEscape reports, and bytes that are not UTF-8, escaped.
func escapeControls(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n == 1:
			out = fmt.Appendf(out, `\x%02x`, b[0])
		case r < 0x80 && needsEscape(r):
			out = fmt.Appendf(out, `\x%02x`, r)
		case needsEscape(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}
