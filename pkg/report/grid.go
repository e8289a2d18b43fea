// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/credwatch/credwatch/pkg/redact"
)

// Width is the width, in columns, a table fits by default (-o wide lifts it).
const Width = 120

// TableOptions say how a table is written: Wide is -o wide (every column, no cell cut).
type TableOptions struct {
	Wide bool
}

// Col is a column of a Grid. A Wide column is shown only with -o wide; a Flex column's cells
// are cut (with "…") so that the table fits Width.
type Col struct {
	Name       string
	Wide, Flex bool
}

// Grid is a table that fits a terminal, as kubectl's do: without -o wide it leaves out the
// Wide columns and cuts the Flex ones to fit Width; -o wide shows every column whole.
type Grid struct {
	indent string
	cols   []Col
	rows   [][]string
}

// NewGrid returns an empty grid whose lines start with indent.
func NewGrid(indent string, cols ...Col) *Grid {
	return &Grid{indent: indent, cols: cols}
}

// Row adds a row: one cell per column, in order (missing cells are empty).
func (g *Grid) Row(cells ...string) {
	g.rows = append(g.rows, cells)
}

// Write writes the header and the rows, columns two spaces apart.
func (g *Grid) Write(w io.Writer, o TableOptions) error {
	var show []int
	for i, c := range g.cols {
		if o.Wide || !c.Wide {
			show = append(show, i)
		}
	}
	cell := func(r []string, i int) string {
		if i < len(r) {
			return r[i]
		}
		return ""
	}
	width := make(map[int]int, len(show))
	for _, i := range show {
		width[i] = utf8.RuneCountInString(g.cols[i].Name)
		for _, r := range g.rows {
			width[i] = max(width[i], utf8.RuneCountInString(cell(r, i)))
		}
	}
	if !o.Wide {
		g.fit(show, width)
	}
	var b strings.Builder
	line := func(cells func(i int) string) {
		b.WriteString(g.indent)
		for k, i := range show {
			c := cut(cells(i), width[i])
			b.WriteString(c)
			if k < len(show)-1 {
				b.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2))
			}
		}
		b.WriteString("\n")
	}
	line(func(i int) string { return g.cols[i].Name })
	cutAny := false
	for _, r := range g.rows {
		line(func(i int) string {
			cutAny = cutAny || utf8.RuneCountInString(cell(r, i)) > width[i]
			return cell(r, i)
		})
	}
	if cutAny {
		fmt.Fprintf(&b, "%s(… marks what was cut to fit %d columns: -o wide shows it whole)\n", g.indent, Width)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fit narrows the Flex columns, the widest by one column at a time, until a line fits Width or they are as narrow
// as their headers (a table without Flex columns is left as wide as it is).
func (g *Grid) fit(show []int, width map[int]int) {
	total := func() int {
		n := utf8.RuneCountInString(g.indent) + 2*(len(show)-1)
		for _, i := range show {
			n += width[i]
		}
		return n
	}
	for over := total() - Width; over > 0; over = total() - Width {
		widest := -1
		for _, i := range show {
			floor := max(utf8.RuneCountInString(g.cols[i].Name), 8)
			if g.cols[i].Flex && width[i] > floor && (widest < 0 || width[i] > width[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			return
		}
		width[widest]-- // one at a time: the widest Flex columns end up equally wide
	}
}

// cut shortens s to n runes by leaving out its middle ("…"): the end of a path, a Pod's name
// or a URL's port tells rows apart more often than their start does. Like Cut it redacts
// first: the cut could part a secret from the words that mark it as one.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if s = redact.Text(s); utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	head := (n - 1) * 2 / 5
	return string(r[:head]) + "…" + string(r[len(r)-(n-1-head):])
}

// Wrap writes text word-wrapped to Width, every line starting with indent (a word longer than
// a line is left whole on a line of its own: a token or URL is never split). Text that needs
// more than one line is redacted first: a break could part `Bearer` from its value.
func Wrap(w io.Writer, indent, text string) error {
	return Hang(w, indent, indent, text)
}

// Hang is Wrap with a first line that starts with first ("note: ") and the others with rest.
func Hang(w io.Writer, first, rest, text string) error {
	if utf8.RuneCountInString(first)+utf8.RuneCountInString(text) > Width {
		text = redact.Text(text)
	}
	var b strings.Builder
	n := 0
	// Only spaces part words: a carriage return or another control character stays in its word,
	// for the table's escaping to show it.
	for word := range strings.SplitSeq(text, " ") {
		if word == "" {
			continue
		}
		wl := utf8.RuneCountInString(word)
		switch {
		case b.Len() == 0:
			b.WriteString(first)
			n = utf8.RuneCountInString(first)
		case n+1+wl > Width:
			b.WriteString("\n")
			b.WriteString(rest)
			n = utf8.RuneCountInString(rest)
		default:
			b.WriteString(" ")
			n++
		}
		b.WriteString(word)
		n += wl
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
