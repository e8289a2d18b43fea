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

// Width is the width, in columns, of a terminal whose size cannot be read, and the width prose
// wraps at where stdout is not a terminal.
const Width = 120

// TableOptions say how a table is written. They are decided once, by Print, from the format and
// from where the output goes; a command never picks a width itself.
type TableOptions struct {
	// Wide is -o wide: every column, every cell whole on one line.
	Wide bool
	// Width is the terminal's width in columns, which a table fits (Flex cells are cut, Wrap
	// cells wrap); 0: stdout is not a terminal, and no cell is cut or wrapped (kubectl's habit:
	// a file, a pipe or a CI log gets the whole text).
	Width int
}

// Lines is the width prose wraps at: the terminal's, else Width. Wrapping leaves every word
// whole, so it applies to files too.
func (o TableOptions) Lines() int {
	if o.Width > 0 {
		return o.Width
	}
	return Width
}

// fits says whether a table is fitted to a width: on a terminal, without -o wide.
func (o TableOptions) fits() bool { return o.Width > 0 && !o.Wide }

// Col is a column of a Grid. A Wide column is shown only with -o wide. On a terminal (see
// TableOptions) a Flex column's cells are cut (with "…") and a Wrap column's cells wrap so that
// the table fits; a Wrap column holds what decides (a verdict, an error's text) and is never
// cut. A Repeats column says what the lines above the table say too: when every row holds one
// value (or "-"), it is shown only with -o wide.
type Col struct {
	Name                      string
	Wide, Flex, Wrap, Repeats bool
}

// Grid is a table that fits a terminal, as kubectl's do: without -o wide it leaves out the Wide
// columns and the Repeats columns that hold one value, and on a terminal it cuts the Flex
// columns and wraps the Wrap ones to fit its width; -o wide, a file or a pipe gets every cell
// whole.
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

func (g *Grid) cell(r []string, i int) string {
	if i < len(r) {
		return r[i]
	}
	return ""
}

// shown are the indexes of the columns o shows.
func (g *Grid) shown(o TableOptions) []int {
	var show []int
	for i, c := range g.cols {
		if o.Wide || !c.Wide && !(c.Repeats && g.oneValue(i)) {
			show = append(show, i)
		}
	}
	return show
}

// oneValue says whether every row of column i holds one value, "-" and empty cells aside.
func (g *Grid) oneValue(i int) bool {
	seen := ""
	for _, r := range g.rows {
		c := g.cell(r, i)
		if c == "" || c == "-" {
			continue
		}
		if seen != "" && c != seen {
			return false
		}
		seen = c
	}
	return true
}

// Write writes the header and the rows, columns two spaces apart.
func (g *Grid) Write(w io.Writer, o TableOptions) error {
	show := g.shown(o)
	width := make(map[int]int, len(show))
	for _, i := range show {
		width[i] = utf8.RuneCountInString(g.cols[i].Name)
		for _, r := range g.rows {
			width[i] = max(width[i], utf8.RuneCountInString(g.cell(r, i)))
		}
	}
	if o.fits() {
		g.fit(show, width, o.Width)
	}
	var b strings.Builder
	cutAny := false
	// lines writes one row: a cell is cut (Flex) or wrapped (Wrap) to its column's width, and
	// the row takes as many lines as its longest wrapped cell.
	lines := func(cells func(i int) string) {
		parts := make(map[int][]string, len(show))
		n := 1
		for _, i := range show {
			c := cells(i)
			switch {
			case utf8.RuneCountInString(c) <= width[i]:
				parts[i] = []string{c}
			case g.cols[i].Wrap:
				parts[i] = wrapCell(c, width[i])
			default:
				cutAny = true
				parts[i] = []string{cut(c, width[i])}
			}
			n = max(n, len(parts[i]))
		}
		for k := range n {
			var l strings.Builder
			l.WriteString(g.indent)
			for j, i := range show {
				c := ""
				if k < len(parts[i]) {
					c = parts[i][k]
				}
				l.WriteString(c)
				if j < len(show)-1 {
					l.WriteString(strings.Repeat(" ", max(width[i]-utf8.RuneCountInString(c), 0)+2))
				}
			}
			b.WriteString(strings.TrimRight(l.String(), " "))
			b.WriteString("\n")
		}
	}
	lines(func(i int) string { return g.cols[i].Name })
	for _, r := range g.rows {
		lines(func(i int) string { return g.cell(r, i) })
	}
	if cutAny {
		note := fmt.Sprintf("(… marks what was cut to fit %d columns: -o wide shows it whole)", o.Width)
		if err := o.Hang(&b, g.indent, g.indent+" ", note); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fit narrows the Flex and Wrap columns, the widest by one column at a time, until a line fits
// columns or they are as narrow as their floors (a table without such columns is left as wide
// as it is; a line of a terminal then wraps, no text is lost).
func (g *Grid) fit(show []int, width map[int]int, columns int) {
	total := func() int {
		n := utf8.RuneCountInString(g.indent) + 2*(len(show)-1)
		for _, i := range show {
			n += width[i]
		}
		return n
	}
	for over := total() - columns; over > 0; over = total() - columns {
		widest := -1
		for _, i := range show {
			floor := max(utf8.RuneCountInString(g.cols[i].Name), 8)
			if g.cols[i].Wrap {
				floor = max(utf8.RuneCountInString(g.cols[i].Name), 20)
			}
			if (g.cols[i].Flex || g.cols[i].Wrap) && width[i] > floor && (widest < 0 || width[i] > width[widest]) {
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

// Wrap writes text word-wrapped to o.Lines(), every line starting with indent (a word longer
// than a line is left whole on a line of its own: a token or URL is never split). Text that
// needs more than one line is redacted first: a break could part `Bearer` from its value.
func (o TableOptions) Wrap(w io.Writer, indent, text string) error {
	return o.Hang(w, indent, indent, text)
}

// Hang is Wrap with a first line that starts with first ("note: ") and the others with rest.
func (o TableOptions) Hang(w io.Writer, first, rest, text string) error {
	if utf8.RuneCountInString(first)+utf8.RuneCountInString(text) > o.Lines() {
		text = redact.Text(text)
	}
	var b strings.Builder
	for i, l := range breakWords(text, o.Lines()-utf8.RuneCountInString(first), o.Lines()-utf8.RuneCountInString(rest)) {
		if i == 0 {
			b.WriteString(first)
		} else {
			b.WriteString(rest)
		}
		b.WriteString(l)
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrapCell breaks a Wrap column's cell into lines of at most n runes (a longer word is left
// whole), redacted first as Hang's text is.
func wrapCell(s string, n int) []string {
	return breakWords(redact.Text(s), n, n)
}

// breakWords breaks text into lines of at most first runes (the first line) and rest runes (the
// others) at spaces; a word longer than a line is left whole on a line of its own. Only spaces
// part words: a carriage return or another control character stays in its word, for the
// table's escaping to show it.
func breakWords(text string, first, rest int) []string {
	var lines []string
	var l strings.Builder
	n, limit := 0, first
	for word := range strings.SplitSeq(text, " ") {
		if word == "" {
			continue
		}
		wl := utf8.RuneCountInString(word)
		switch {
		case l.Len() == 0 && len(lines) == 0:
		case n+1+wl > limit:
			lines = append(lines, l.String())
			l.Reset()
			n, limit = 0, rest
		default:
			l.WriteString(" ")
			n++
		}
		l.WriteString(word)
		n += wl
	}
	if l.Len() > 0 {
		lines = append(lines, l.String())
	}
	return lines
}
