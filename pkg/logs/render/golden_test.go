// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package render

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/report"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// analyzeFiles analyses paths; a relative one is pkg/logs's testdata (testdata/seed-000.log),
// read from there and named as it is there, as the goldens name it.
func analyzeFiles(t *testing.T, cfg logs.Config, paths ...string) *logs.Report {
	t.Helper()
	files := logs.FileInputs(context.Background(), inLogs(paths), strings.NewReader(""), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), logs.FileSelect{})
	for i := range files.Inputs {
		files.Inputs[i].Name = strings.TrimPrefix(files.Inputs[i].Name, "../")
	}
	r, err := logs.Analyze(context.Background(), cfg, files.Inputs)
	if err != nil {
		t.Fatal(err)
	}
	r.Inputs = append(files.Bad, r.Inputs...)
	r.Skipped = files.Skipped
	return r
}

// inLogs is paths with the relative ones under pkg/logs.
func inLogs(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join("..", p)
		}
		out[i] = p
	}
	return out
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for name, year := range map[string]int{"seed-000": 2022, "mixed": 2026, "field-mixed": 2026} {
		t.Run(name, func(t *testing.T) {
			r := analyzeFiles(t, logs.Config{Year: year, Workers: 2}, filepath.Join("testdata", name+".log"))
			for _, f := range []report.Format{report.Table, report.JSON, report.SARIF} {
				var b bytes.Buffer
				if err := report.Print(&b, f, New(r)); err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", "golden", name+"."+string(f))
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -update)", err)
				}
				if !bytes.Equal(b.Bytes(), want) {
					t.Errorf("%s differs from %s (run go test ./pkg/logs/render -run TestGolden -update):\n%s", f, golden, b.String())
				}
			}
		})
	}
}
