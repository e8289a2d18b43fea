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
	"github.com/credwatch/credwatch/pkg/logs/internal/scan"
)

// TestMappedMatchesRead checks that a file large enough to be memory-mapped (its finished blocks
// dropped in batches) gives the same report as the same bytes read from a stream.
func TestMappedMatchesRead(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if _, _, err := loggen.Write(&b, loggen.Options{Bytes: 3*scan.ReleaseBatch + scan.MapMinimum, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "apiserver.log")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	mapped := fileInput(context.Background(), path, st)
	read := mapped
	read.Open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b.Bytes())), nil }
	var reports [2]*Report
	for i, in := range []Input{mapped, read} {
		if reports[i], err = Analyze(context.Background(), Config{Workers: 3}, []Input{in}); err != nil {
			t.Fatal(err)
		}
	}
	// Compared as JSON: events also carry the index of their block, and blocks differ in size.
	var js [2][]byte
	for i, rep := range reports {
		if js[i], err = json.Marshal(rep); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(js[0], js[1]) {
		t.Errorf("mapped and read reports differ:\nmapped %+v\nread   %+v", reports[0].Summary, reports[1].Summary)
	}
	if reports[0].Summary.AuthFailures == 0 {
		t.Error("no authentication failures found")
	}
}
