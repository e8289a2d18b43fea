// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package root

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
)

// TestExamplesParse: every example of every command's help, and every `credwatch …` command line
// in the README and the user docs' code blocks, names a command that exists and flags it has,
// with values its flags accept (parsed as the command would, not run: most need a cluster).
// A flag renamed or removed without its docs fails here.
func TestExamplesParse(t *testing.T) {
	var out bytes.Buffer
	root := NewCommand("credwatch", cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	var lines []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, l := range strings.Split(c.Example, "\n") {
			lines = append(lines, c.CommandPath()+" help: "+strings.TrimSpace(l))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	docs, _ := filepath.Glob("../../../docs/*.md")
	docs = append(docs, "../../../README.md")
	for _, d := range docs {
		lines = append(lines, codeLines(t, d)...)
	}
	n := 0
	for _, src := range lines {
		where, l, _ := strings.Cut(src, ": ")
		args, ok := commandLine(l)
		if !ok {
			continue
		}
		n++
		// A fresh tree per line: flags parsed for one line must not carry into the next.
		fresh := NewCommand("credwatch", cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
		c, rest, err := fresh.Find(args)
		if err != nil || c == fresh {
			t.Errorf("%s: %q names no command (%v)", where, l, err)
			continue
		}
		c.InitDefaultHelpFlag()
		if err := c.ParseFlags(rest); err != nil {
			t.Errorf("%s: %q: %v", where, l, err)
		}
	}
	t.Logf("%d command lines parsed", n)
	if n < 40 {
		t.Errorf("only %d command lines found in the help and docs", n)
	}
}

// codeLines are the lines of the fenced code blocks of a Markdown file, each prefixed with where
// it is.
func codeLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if in {
			out = append(out, filepath.Base(path)+":"+strconv.Itoa(n)+": "+strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "$ ")))
		}
	}
	return out
}

// commandLine splits a `credwatch …` (or `kubectl credwatch …`) shell line into the words after
// the program's name, up to a pipe, a redirection, a ; or && or a comment; lines with a
// placeholder the reader fills in (<…>, …, UPPER-CASE metavariables in brackets) are skipped.
func commandLine(l string) ([]string, bool) {
	l, ok := strings.CutPrefix(l, "credwatch ")
	if !ok {
		if l, ok = strings.CutPrefix(l, "kubectl credwatch "); !ok {
			return nil, false
		}
	}
	if strings.ContainsAny(l, "<[…$") || strings.Contains(l, "...") || strings.HasSuffix(l, "\\") {
		return nil, false
	}
	var words []string
	var cur strings.Builder
	var quote rune
	has := false
	for _, r := range l {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, has = r, true
		case r == ' ' || r == '\t':
			if has {
				words = append(words, cur.String())
				cur.Reset()
				has = false
			}
		case r == '|' || r == '>' || r == ';' || r == '&' || r == '#':
			if has {
				words = append(words, cur.String())
			}
			return words, quote == 0
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has {
		words = append(words, cur.String())
	}
	return words, quote == 0
}
