// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/credwatch/credwatch/pkg/redact"
)

// Terminal is the file under w (through writers that Unwrap, as redact.Writers do) when it is a
// terminal.
func Terminal(w io.Writer) (*os.File, bool) {
	for {
		u, ok := w.(interface{ Unwrap() io.Writer })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	return f, ok && term.IsTerminal(int(f.Fd()))
}

// TerminalWidth is the width in columns of the terminal under w, Width when its size cannot
// be read, or 0 when w is not a terminal: the one place where a table's width is decided.
func TerminalWidth(w io.Writer) int {
	f, ok := Terminal(w)
	if !ok {
		return 0
	}
	if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
		return cols
	}
	return Width
}

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
