// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/logs/internal/loggen"
)

func analyzeFiles(t *testing.T, cfg Config, paths ...string) *Report {
	t.Helper()
	files := FileInputs(context.Background(), paths, strings.NewReader(""), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), FileSelect{})
	r, err := Analyze(context.Background(), cfg, files.Inputs)
	if err != nil {
		t.Fatal(err)
	}
	r.Inputs = append(files.Bad, r.Inputs...)
	r.Skipped = files.Skipped
	return r
}

// TestBadInputs: each bad input gets its own message, the good ones are still read, skipped
// lines are counted.
func TestBadInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed, err := os.ReadFile("testdata/seed-000.log")
	if err != nil {
		t.Fatal(err)
	}
	authLine := `E1215 08:16:43.535948       1 authentication.go:63] "Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"` + "\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for range 200 {
		zw.Write(seed)
	}
	zw.Close()
	files := map[string][]byte{
		"good.log":         seed,
		"good.log.gz":      gz.Bytes(),
		"truncated.log.gz": gz.Bytes()[:gz.Len()/2],
		"garbage.log":      append([]byte{0x7f, 'E', 'L', 'F', 0, 0, 1, 2, 0xff, 0xfe}, bytes.Repeat([]byte{0, 0x90, 0xc3}, 3000)...),
		"invalid-utf8.log": []byte("I1215 08:00:00.000000 1 x.go:1] \xff\xfe\xfd caf\xe9\n" + strings.Replace(authLine, "expired", "expired\xff", 1) + authLine),
		"nul-lines.log":    []byte("ok line\nbinary \x00\x01 " + authLine + authLine),
		"long-line.log":    append(append(bytes.Repeat([]byte("x"), 10<<20), '\n'), authLine...),
		"empty.log":        nil,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := analyzeFiles(t, Config{Year: 2022}, dir, filepath.Join(dir, "missing.log"))
	denied := Input{Name: "denied.log", Open: func() (io.ReadCloser, error) {
		return nil, &fs.PathError{Op: "open", Path: "denied.log", Err: fs.ErrPermission}
	}}
	r2, err := Analyze(context.Background(), Config{}, []Input{denied})
	if err != nil {
		t.Fatal(err)
	}
	r.Inputs = append(r.Inputs, r2.Inputs...)
	byName := map[string]InputStatus{}
	for _, in := range r.Inputs {
		byName[filepath.Base(in.Name)] = in
	}
	want := []struct {
		name, problem string
		read          bool
		matched       int64
		skipped       int64
	}{
		{"good.log", "", true, 19, 0},
		{"good.log.gz", "", true, 19 * 200, 0},
		{"truncated.log.gz", "truncated gzip stream after", true, -1, 0},
		{"garbage.log", "binary data, not a text log: skipped", false, 0, 0},
		{"invalid-utf8.log", "", true, 2, 0},
		{"nul-lines.log", "", true, 1, 1},
		{"long-line.log", "longer than", true, 1, 1},
		{"empty.log", "empty", true, 0, 0},
		{"missing.log", "cannot read: no such file or directory", false, 0, 0},
		{"denied.log", "cannot read: permission denied", false, 0, 0},
	}
	for _, w := range want {
		got, ok := byName[w.name]
		if !ok {
			t.Errorf("%s: no status", w.name)
			continue
		}
		problems := strings.Join(got.Problems, "; ")
		if w.problem == "" && problems != "" || !strings.Contains(problems, w.problem) {
			t.Errorf("%s: problems %q, want %q", w.name, problems, w.problem)
		}
		if got.Read != w.read {
			t.Errorf("%s: read=%v, want %v", w.name, got.Read, w.read)
		}
		if w.matched >= 0 && got.MatchedLines != w.matched {
			t.Errorf("%s: matched %d lines, want %d", w.name, got.MatchedLines, w.matched)
		}
		if w.matched < 0 && got.MatchedLines == 0 {
			t.Errorf("%s: nothing matched before the truncation", w.name)
		}
		if got.SkippedLines != w.skipped {
			t.Errorf("%s: skipped %d lines, want %d", w.name, got.SkippedLines, w.skipped)
		}
	}
}

// TestBlocksDoNotSplitLines reads a generated log with tiny blocks and with the defaults: the
// counts, line numbers and evidence must agree, and match what the generator wrote.
func TestBlocksDoNotSplitLines(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	_, auth, err := loggen.Write(&b, loggen.Options{Bytes: 2 << 20, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	in := Input{Name: "gen", Host: "gen", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
	small, err := Analyze(context.Background(), Config{BlockSize: 700, MaxLineBytes: 2048, Workers: 3, Year: 2026}, []Input{in})
	if err != nil {
		t.Fatal(err)
	}
	big, err := Analyze(context.Background(), Config{Year: 2026}, []Input{in})
	if err != nil {
		t.Fatal(err)
	}
	if small.Summary.AuthFailures != int(auth) || big.Summary.AuthFailures != int(auth) {
		t.Fatalf("auth failures: small blocks %d, default %d, generated %d", small.Summary.AuthFailures, big.Summary.AuthFailures, auth)
	}
	if small.Summary.Lines != big.Summary.Lines {
		t.Fatalf("lines: %d vs %d", small.Summary.Lines, big.Summary.Lines)
	}
	lines := bytes.Split(data, []byte{'\n'})
	for _, ev := range small.Events {
		if got := evidenceLine(string(lines[ev.LineNumber-1])); got != ev.Line {
			t.Fatalf("event line %d is %q, but that line is %q", ev.LineNumber, ev.Line, got)
		}
	}
}
