// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package root

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
)

// TestExamplesParse: every example of every command's help, and every `credwatch …` command line
// in the README and the user docs' code blocks, names a command that exists and flags it has,
// with values its flags accept (parsed as the command would). A flag renamed or removed without
// its docs fails here; classes() (examples_class_test.go) says where each one is run.
func TestExamplesParse(t *testing.T) {
	var out bytes.Buffer
	exs := examples(t)
	for _, ex := range exs {
		// A fresh tree per line: flags parsed for one line must not carry into the next.
		fresh := NewCommand("credwatch", cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
		c, rest, err := fresh.Find(ex.args())
		if err != nil || c == fresh {
			t.Errorf("%s: %q names no command (%v)", ex.where, ex.cmd, err)
			continue
		}
		c.InitDefaultHelpFlag()
		if err := c.ParseFlags(rest); err != nil {
			t.Errorf("%s: %q: %v", ex.where, ex.cmd, err)
		}
	}
	t.Logf("%d command lines parsed", len(exs))
	if len(exs) < 40 {
		t.Errorf("only %d command lines found in the help and docs", len(exs))
	}
}

// example is one credwatch command of a command's help Example or of a user doc's code block.
type example struct {
	where string // "credwatch check help", or "README.md:13"
	cmd   string // as written after "credwatch ", up to a pipe, redirection, ; & ) or comment
	words []word
	piped bool   // another program's output is piped to it: `kubectl create token default | credwatch token inspect -`
	into  string // what its output is piped to, if anything: "jq -r .lab.adminKubeconfig)"
}

// word is one shell word of a command line.
type word struct {
	text    string
	pattern bool // unquoted, with * or ?: the shell replaces it with the files it matches
}

func (ex example) args() []string {
	out := make([]string, len(ex.words))
	for i, w := range ex.words {
		out[i] = w.text
	}
	return out
}

// examples are the credwatch commands of every command's help and of the fenced code blocks of
// README.md and docs/*.md: at the start of a line, after a pipe, or in $(…). Lines with a
// placeholder the reader fills in (<…>, …, UPPER-CASE metavariables in brackets) are synopses,
// not commands.
func examples(t *testing.T) []example {
	t.Helper()
	var out bytes.Buffer
	root := NewCommand("credwatch", cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	var exs []example
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, l := range joinContinued(strings.Split(c.Example, "\n")) {
			exs = append(exs, commandsIn(c.CommandPath()+" help", l.text)...)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	docs, _ := filepath.Glob("../../../docs/*.md")
	docs = append(docs, "../../../README.md")
	for _, d := range docs {
		for _, l := range codeLines(t, d) {
			exs = append(exs, commandsIn(filepath.Base(d)+":"+strconv.Itoa(l.n), l.text)...)
		}
	}
	return exs
}

// commandsIn are the credwatch commands of one shell line.
func commandsIn(where, line string) []example {
	start := regexp.MustCompile(`(^|\| |\$\()(kubectl )?credwatch `)
	var exs []example
	for _, m := range start.FindAllStringSubmatchIndex(line, -1) {
		rest := line[m[1]:]
		words, n, ok := commandLine(rest)
		if !ok {
			continue
		}
		ex := example{where: where, cmd: strings.Join(strings.Fields(rest[:n]), " "), words: words, piped: line[m[2]:m[3]] == "| "}
		if into, ok := strings.CutPrefix(rest[n:], "|"); ok {
			ex.into = strings.TrimSpace(into)
		}
		exs = append(exs, ex)
	}
	return exs
}

// numbered is a line and the number of its first line in its file.
type numbered struct {
	n    int
	text string
}

// joinContinued trims each line, and joins a line ending in a backslash with the next one.
func joinContinued(lines []string) []numbered {
	var out []numbered
	cont := false
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if cont {
			out[len(out)-1].text = strings.TrimSuffix(out[len(out)-1].text, "\\") + " " + l
		} else {
			out = append(out, numbered{i + 1, l})
		}
		cont = strings.HasSuffix(l, "\\")
	}
	return out
}

// codeLines are the lines of the fenced code blocks of a Markdown file, without a leading "$ "
// prompt, continued lines joined.
func codeLines(t *testing.T, path string) []numbered {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var all []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		all = append(all, sc.Text())
	}
	var out []numbered
	in := false
	for _, l := range joinContinued(all) {
		if strings.HasPrefix(l.text, "```") {
			in = !in
			continue
		}
		if in {
			l.text = strings.TrimPrefix(l.text, "$ ")
			out = append(out, l)
		}
	}
	return out
}

// commandLine splits the words of a command, l being what follows the program's name, up to a
// pipe, a redirection, a ; & or ), or a comment; n is where it ends in l. ok is false for a
// command with a placeholder (<…>, […], …, $) or an unclosed quote.
func commandLine(l string) (words []word, n int, ok bool) {
	var cur strings.Builder
	var quote rune
	has, quoted := false, false
	flush := func() {
		if has {
			s := cur.String()
			words = append(words, word{text: s, pattern: !quoted && strings.ContainsAny(s, "*?")})
		}
		cur.Reset()
		has, quoted = false, false
	}
	n = len(l)
scan:
	for i, r := range l {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, has, quoted = r, true, true
		case r == ' ' || r == '\t':
			flush()
		case strings.ContainsRune("|>;&#)", r):
			n = i
			break scan
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	flush()
	if quote != 0 || strings.ContainsAny(l[:n], "<[…$") || len(words) == 0 {
		return nil, 0, false
	}
	return words, n, true
}
