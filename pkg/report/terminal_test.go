// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"bytes"
	"io"
	"testing"

	"github.com/credwatch/credwatch/pkg/redact/redacttest"
)

// cells is a one-row table of untrusted cells.
type cells []string

func (c cells) WriteTable(w io.Writer, _ TableOptions) error {
	tw := NewTabWriter(w)
	Row(tw, c...)
	return tw.Flush()
}

func TestTableEscapesControls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cell string
		want string // the row printed, before its newline
	}{
		{"plain", "token rejected", "token rejected"},
		{"UTF-8 kept", "café 日本 ✓ \ufffd", "café 日本 ✓ \ufffd"},
		{"C1 NEL", "a\u0085b", `a\u0085b`},
	}
	for _, h := range redacttest.HostileText { // escape sequences, controls, bidi, zero-width
		tests = append(tests, struct{ name, cell, want string }{h.Name, h.Raw, h.Quoted})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := Print(&b, Table, cells{"cell", tt.cell}); err != nil {
				t.Fatal(err)
			}
			if want := "cell  " + tt.want + "\n"; b.String() != want {
				t.Fatalf("got %q, want %q", b.String(), want)
			}
		})
	}
}

// TestTableKeepsLayout: the table's own columns and newlines are kept, what the buffer held
// before the table is left alone, and columns are as wide as the raw cells (the escaped row
// alone is wider).
func TestTableKeepsLayout(t *testing.T) {
	t.Parallel()
	b := bytes.NewBufferString("before\x1b\n")
	if err := writeTable(b, rows{{"a", "b"}, {"c\x1b", "d"}}, TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "before\x1b\na   b\nc\\x1b  d\n"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

type rows [][]string

func (r rows) WriteTable(w io.Writer, _ TableOptions) error {
	tw := NewTabWriter(w)
	for _, c := range r {
		Row(tw, c...)
	}
	return tw.Flush()
}
