// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/credwatch/credwatch/internal/gridtest"
)

// gridResult is a Tabular of one grid, as a command's result is.
type gridResult struct{ g *Grid }

func (r gridResult) WriteTable(w io.Writer, o TableOptions) error { return r.g.Write(w, o) }

// Into a file or a pipe (not a terminal) every cell is whole, Flex or Wrap, as kubectl prints.
func TestPrintNotTerminalKeepsCellsWhole(t *testing.T) {
	long := "https://" + strings.Repeat("a-rather-long-host-name.", 16) + "example.com/" + strings.Repeat("x", 400)
	words := strings.TrimSpace(strings.Repeat("member rejects tokens minted through the planned key; ", 8))
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, tc := range []struct {
		name string
		out  func() (io.Writer, func() string)
		f    Format
	}{
		{"buffer", func() (io.Writer, func() string) { var b bytes.Buffer; return &b, b.String }, Table},
		{"buffer wide", func() (io.Writer, func() string) { var b bytes.Buffer; return &b, b.String }, Wide},
		{"file", func() (io.Writer, func() string) {
			return file, func() string { b, _ := os.ReadFile(file.Name()); return string(b) }
		}, Table},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGrid("", Col{Name: "NAME"}, Col{Name: "SOURCE", Flex: true}, Col{Name: "TRUST", Wrap: true})
			g.Row("one", long, words)
			g.Row("two", "short", "all accept all")
			w, got := tc.out()
			if err := Print(w, tc.f, gridResult{g}); err != nil {
				t.Fatal(err)
			}
			out := got()
			for _, want := range []string{long, words} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks the whole cell %.40q…:\n%s", want, out)
				}
			}
			if strings.Contains(out, "…") {
				t.Errorf("output cut a cell:\n%s", out)
			}
		})
	}
}

func TestTerminalWidthNotTerminal(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, w := range map[string]io.Writer{"buffer": &bytes.Buffer{}, "file": file, "discard": io.Discard} {
		if n := TerminalWidth(w); n != 0 {
			t.Errorf("%s: TerminalWidth = %d, want 0", name, n)
		}
	}
}

// On a terminal a Wrap cell wraps within its column and keeps every word; a Flex cell is cut.
func TestGridWrapsOnTerminal(t *testing.T) {
	trust := "current rejects planned; planned rejects pre-roll; planned rejects current"
	long := "file testdata/configs/" + strings.Repeat("very-long-name-", 8) + "cpi.conf"
	for _, width := range []int{60, 80, 120} {
		g := NewGrid("", Col{Name: "STEP"}, Col{Name: "ISSUER", Flex: true}, Col{Name: "TRUST AFTER THE STEP", Wrap: true})
		g.Row("1", long, trust)
		g.Row("2", "-", "all accept all")
		var b strings.Builder
		if err := g.Write(&b, TableOptions{Width: width}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("width %d: line of %d columns: %q", width, n, l)
			}
		}
		if got := gridtest.Column(lines, "TRUST AFTER THE STEP"); !strings.Contains(got, trust) {
			t.Errorf("width %d: the trust column reads %q, want it to hold %q:\n%s", width, got, trust, b.String())
		}
		if strings.Contains(b.String(), long) || !strings.Contains(b.String(), "marks what was cut") {
			t.Errorf("width %d: the Flex cell was not cut, or without a note:\n%s", width, b.String())
		}
	}
}

// A Repeats column holding one value in every row says what the lines above say: -o wide's.
func TestGridRepeatsColumn(t *testing.T) {
	for _, tc := range []struct {
		name      string
		issuers   []string
		o         TableOptions
		wantShown bool
	}{
		{"one value, table", []string{"https://new.example.com", "-", "https://new.example.com"}, TableOptions{}, false},
		{"one value, terminal", []string{"https://new.example.com", "https://new.example.com"}, TableOptions{Width: 80}, false},
		{"one value, wide", []string{"https://new.example.com", "-", "https://new.example.com"}, TableOptions{Wide: true}, true},
		{"two values, table", []string{"https://new.example.com", "https://old.example.com"}, TableOptions{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGrid("", Col{Name: "STEP"}, Col{Name: "ISSUER", Repeats: true}, Col{Name: "TRUST"})
			for i, iss := range tc.issuers {
				g.Row(string(rune('1'+i)), iss, "all accept all")
			}
			var b strings.Builder
			if err := g.Write(&b, tc.o); err != nil {
				t.Fatal(err)
			}
			if shown := strings.Contains(b.String(), "ISSUER") && strings.Contains(b.String(), "https://new.example.com"); shown != tc.wantShown {
				t.Errorf("ISSUER shown: %v, want %v:\n%s", shown, tc.wantShown, b.String())
			}
			if !strings.Contains(b.String(), "TRUST") {
				t.Errorf("the other columns are gone:\n%s", b.String())
			}
		})
	}
}
