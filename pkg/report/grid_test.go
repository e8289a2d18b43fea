// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestGridFitsAndWide(t *testing.T) {
	long := "file testdata/configs/" + strings.Repeat("very-long-name-", 8) + "cpi.conf"
	g := NewGrid("  ", Col{Name: "NAME"}, Col{Name: "URL", Wide: true}, Col{Name: "SOURCE", Flex: true}, Col{Name: "STATE"})
	g.Row("apiserver-1", "https://apiserver-1:6443", long, "ok")
	g.Row("apiserver-2", "https://apiserver-2:6443", "short", "unreachable")
	var narrow, wide strings.Builder
	if err := g.Write(&narrow, TableOptions{Width: Width}); err != nil {
		t.Fatal(err)
	}
	if err := g.Write(&wide, TableOptions{Wide: true}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSuffix(narrow.String(), "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("line of %d columns in the default table: %q", n, l)
		}
	}
	for _, want := range []string{"NAME", "SOURCE", "apiserver-2", "cpi.conf", "unreachable", "-o wide shows it whole"} {
		if !strings.Contains(narrow.String(), want) {
			t.Errorf("default table lacks %q:\n%s", want, narrow.String())
		}
	}
	if strings.Contains(narrow.String(), "URL") || strings.Contains(narrow.String(), long) {
		t.Errorf("default table shows a wide column or the whole long cell:\n%s", narrow.String())
	}
	for _, want := range []string{"URL", "https://apiserver-1:6443", long} {
		if !strings.Contains(wide.String(), want) {
			t.Errorf("-o wide lacks %q:\n%s", want, wide.String())
		}
	}
	if strings.Contains(wide.String(), "…") {
		t.Errorf("-o wide cut a cell:\n%s", wide.String())
	}
}

func TestGridLeavesFittingTablesAlone(t *testing.T) {
	g := NewGrid("", Col{Name: "A", Flex: true}, Col{Name: "B"})
	g.Row("one", "two")
	var b strings.Builder
	_ = g.Write(&b, TableOptions{})
	if want := "A    B\none  two\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// A cut cell is redacted first: the cut must not part a password from the key that marks it.
func TestGridCutRedactsFirst(t *testing.T) {
	cell := "password=" + strings.Repeat("p4ss", 40) + " and the rest of a long cell " + strings.Repeat("x", 100)
	g := NewGrid("", Col{Name: "CELL", Flex: true})
	g.Row(cell)
	var b strings.Builder
	_ = g.Write(&b, TableOptions{Width: Width})
	if strings.Contains(b.String(), "p4ssp4ss") {
		t.Errorf("the cut cell shows the password:\n%s", b.String())
	}
}

func TestWrap(t *testing.T) {
	word := strings.Repeat("w", 150)
	text := strings.Repeat("several words of prose ", 12) + word + " end"
	var b strings.Builder
	if err := (TableOptions{}).Wrap(&b, "    ", text); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if !strings.HasPrefix(l, "    ") {
			t.Errorf("line without the indent: %q", l)
		}
		if utf8.RuneCountInString(l) > Width && strings.TrimSpace(l) != word {
			t.Errorf("line of %d columns: %q", utf8.RuneCountInString(l), l)
		}
	}
	if !strings.Contains(b.String(), "\n    "+word+"\n") {
		t.Errorf("the long word is not whole on a line of its own:\n%s", b.String())
	}
	if strings.Join(strings.Fields(b.String()), " ") != strings.Join(strings.Fields(text), " ") {
		t.Errorf("wrapping changed the words")
	}
}

// A break could part "Bearer" from an opaque value; wrapped text is redacted before it breaks.
func TestWrapRedactsFirst(t *testing.T) {
	text := strings.Repeat("prose ", 18) + "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789ABCD rest"
	var b strings.Builder
	_ = TableOptions{Width: 80}.Wrap(&b, "  ", text)
	if strings.Contains(b.String(), "abcdefghijklmnopqrstuvwxyz0123456789ABCD") {
		t.Errorf("wrapped text shows the bearer value:\n%s", b.String())
	}
}
