// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"bytes"

	"github.com/credwatch/credwatch/pkg/redact"
)

// writeTable renders t for a terminal. Tables carry untrusted text (log lines, cloud configs,
// token claims), and a raw escape sequence in a cell would reach the terminal: it could move
// the cursor, rewrite earlier lines, retitle the window or hide what follows, and a bidi
// override could make one issuer display as another. What redact.NeedsQuote reports (control
// characters but tab and newline, bidi and zero-width format characters) and every byte that is
// not UTF-8 is written as a visible escape instead (redact.Printable): \x1b, \x7f, \u009b,
// \u202e, \xff. JSON and YAML escape control characters already and stay exact data. Rows
// holding one are wider than their column, which only they pay for.
func writeTable(w *bytes.Buffer, t Tabular, o TableOptions) error {
	start := w.Len()
	if err := t.WriteTable(w, o); err != nil {
		return err
	}
	out := w.Bytes()[start:]
	if p := redact.Printable(string(out)); p != string(out) {
		w.Truncate(start)
		w.WriteString(p)
	}
	return nil
}
