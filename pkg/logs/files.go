// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strings"
)

// Glob is a checked shell pattern (path.Match: `*`, `?`, `[a-z]`; `*` does not cross `/`).
type Glob struct{ pattern string }

// ParseGlob checks pattern.
func ParseGlob(pattern string) (Glob, error) {
	if pattern == "" {
		return Glob{}, fmt.Errorf("glob: empty pattern")
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return Glob{}, fmt.Errorf("glob %q: %w", pattern, err)
	}
	return Glob{pattern}, nil
}

// String is the pattern.
func (g Glob) String() string { return g.pattern }

// match reports whether the pattern matches rel (a path relative to the directory read, with
// `/` separators) or its base name.
func (g Glob) match(rel string) bool {
	if ok, _ := path.Match(g.pattern, rel); ok {
		return true
	}
	ok, _ := path.Match(g.pattern, path.Base(rel))
	return ok
}

// FileSelect chooses the files read below a directory input. Files named on their own are
// always read (unless credwatch wrote them).
type FileSelect struct {
	// Include, when not empty, replaces the default choice of log-like files: only files that
	// match one of them are read.
	Include []Glob
	// Exclude skips the files, and the directories with all below them, that match one.
	Exclude []Glob
}

// SkippedFile is a file below a directory input that was not read, and why.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Files is what FileInputs found.
type Files struct {
	Inputs  []Input
	Bad     []InputStatus // inputs that cannot be read, with the problem
	Skipped []SkippedFile // files below directories that are not logs or were not chosen
}

// sniffBytes is how much of a file's start (decompressed) is read to tell what it is.
const sniffBytes = 4096

// sniffLines is how many of its first lines are tried as log lines.
const sniffLines = 16

// logExt are the extensions of files named like logs: read without looking at their lines.
var logExt = map[string]bool{".log": true, ".txt": true, ".out": true, ".jsonl": true, ".ndjson": true}

// rotation is a rotated log's suffix: logrotate's ".1" and "-20261202", the kubelet's
// ".20261202-140305".
var rotation = regexp.MustCompile(`[.-][0-9][0-9-]*$`)

// namedLikeLog reports a base name that is a log's: *.log, *.txt, *.out, *.jsonl, *.ndjson,
// rotated (.1, -20261202, .20261202-140305) or gzipped (.gz) or both.
func namedLikeLog(base string) bool {
	base = strings.TrimSuffix(base, ".gz")
	base = rotation.ReplaceAllString(base, "")
	return logExt[path.Ext(base)]
}

// choose decides whether a file found below a directory is read: "" when it is, else why not.
// rel is its path relative to the directory.
func (s FileSelect) choose(file, rel string) string {
	if why := s.excluded(rel); why != "" {
		return why
	}
	named := namedLikeLog(path.Base(rel))
	if len(s.Include) > 0 {
		named = false
		for _, g := range s.Include {
			if g.match(rel) {
				named = true
				break
			}
		}
		if !named {
			return "matches no --include pattern"
		}
	}
	head, err := readHead(file)
	if err != nil {
		if named {
			return "" // the reader says what is wrong with it
		}
		return fmt.Sprintf("not a log: %v", err)
	}
	if own := ownOutput(head); own != "" {
		return own
	}
	if named {
		return ""
	}
	if looksBinary(head) {
		return "binary, not a text log"
	}
	if !hasLogLines(head) {
		return "not a log: no line in a log format at its start"
	}
	return ""
}

// excluded says why a file or directory below the one read (rel) is excluded, or "".
func (s FileSelect) excluded(rel string) string {
	for _, g := range s.Exclude {
		if g.match(rel) {
			return fmt.Sprintf("excluded (%s)", g)
		}
	}
	return ""
}

// readHead reads the first sniffBytes of a file, decompressed when it is gzip.
func readHead(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, sniffBytes)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		r = zr
	}
	head := make([]byte, sniffBytes)
	n, err := fill(r, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		if n == 0 {
			return nil, err
		}
	}
	return head[:n], nil
}

// ownMarkers are what the start of a file credwatch wrote carries, with what it is: the
// apiVersion of every JSON and YAML document (lab evidence.json, -o json|yaml), the partial
// fingerprints of a SARIF log, the title of an HTML page (logs --html, watch --report), the
// suite of a JUnit report, and the first keys of watch's JSON lines.
var ownMarkers = []struct {
	marker, what string
	kind         bool // a document with a kind (kindOf)
}{
	{`"apiVersion": "credwatch.dev/`, "a JSON document", true},
	{`"apiVersion":"credwatch.dev/`, "a JSON document", true},
	{"apiVersion: credwatch.dev/", "a YAML document", true},
	{`"credwatchFinding/`, "a SARIF log", false},
	{"<title>credwatch ", "an HTML page", false},
	{`<testsuite name="credwatch `, "a JUnit report", false},
}

// watchLine is the start of a line of credwatch watch -o json.
var watchLine = regexp.MustCompile(`^\{"time":"[^"]*","interval":[0-9]+,"kind":"`)

// ownOutput says which of credwatch's outputs head starts, or "".
func ownOutput(head []byte) string {
	for _, m := range ownMarkers {
		if bytes.Contains(head, []byte(m.marker)) {
			what := m.what
			if k := kindOf(head); m.kind && k != "" {
				what += " of kind " + k
			}
			return "credwatch's own output (" + what + "), not a log"
		}
	}
	if watchLine.Match(head) {
		return "credwatch's own output (watch events), not a log"
	}
	return ""
}

var kindField = regexp.MustCompile(`(?m)(?:"kind": ?"|^kind: )([A-Za-z]+)`)

// kindOf is the kind of a credwatch document's start, or "".
func kindOf(head []byte) string {
	if m := kindField.FindSubmatch(head); m != nil {
		return string(m[1])
	}
	return ""
}

// hasLogLines reports whether one of the first lines of head is in a log format (parseRecord
// finds an envelope or a klog header in it: not "plain").
func hasLogLines(head []byte) bool {
	lines := strings.SplitN(string(head), "\n", sniffLines+1)
	if len(lines) > sniffLines {
		lines = lines[:sniffLines]
	}
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if parseRecord(l, lineHint{}).Format != "plain" {
			return true
		}
	}
	return false
}
