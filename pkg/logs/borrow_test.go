// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/credwatch/credwatch/pkg/logs/internal/loggen"
)

// TestBorrowedLines checks that nothing kept from a line still borrows its block's bytes once
// the block is done (worker.line parses lines in place): read in 4 KiB blocks from a pool of
// a few reused buffers, every format of the test data gives the report it gives read as one
// block, and every evidence line is the input's line at its number.
func TestBorrowedLines(t *testing.T) {
	t.Parallel()
	data := testLogs(t)
	in := Input{Name: "all", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
	var js [2][]byte
	var small *Report
	for i, block := range []int{4 << 10, 2 * len(data)} {
		rep, err := Analyze(context.Background(), Config{Workers: 2, BlockSize: block, MaxLineBytes: 64 << 10}, []Input{in})
		if err != nil {
			t.Fatal(err)
		}
		if js[i], err = json.Marshal(rep); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			small = rep
		}
	}
	if !bytes.Equal(js[0], js[1]) {
		t.Errorf("4 KiB blocks and one block give different reports:\n%+v", small.Summary)
	}
	lines := bytes.Split(data, []byte("\n"))
	for _, ev := range small.Events {
		if want := evidenceLine(string(lines[ev.LineNumber-1])); ev.Line != want {
			t.Errorf("evidence of line %d = %q, want %q", ev.LineNumber, ev.Line, want)
		}
	}
	if len(small.Events) < 50 {
		t.Errorf("only %d evidence lines", len(small.Events))
	}
}

// testLogs is the generator's log, every test log and every lab capture, one after the other.
func testLogs(t testing.TB) []byte {
	var b bytes.Buffer
	if _, _, err := loggen.Write(&b, loggen.Options{Bytes: 2 << 20, Seed: 11}); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/*.log")
	if err != nil {
		t.Fatal(err)
	}
	lab, err := filepath.Glob("testdata/lab/*/*/*.log")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, lab...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
