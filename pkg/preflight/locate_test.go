// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/finding/sariftest"
)

// TestSARIFLocations: every preflight result, on every testdata and corpus pair, carries a
// physical location (code-scanning uploads reject a result without one): a file of the pair and
// the line its object begins on, which holds that object's kind.
func TestSARIFLocations(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "*", "planned.yaml"))
	more, _ := filepath.Glob(filepath.Join(corpus, "*", "planned.yaml"))
	dirs = append(dirs, more...)
	if len(dirs) < 8 {
		t.Fatalf("%d pairs found", len(dirs))
	}
	for _, p := range dirs {
		dir := filepath.Dir(p)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r := run(t, dir, "")
			for _, f := range r.Findings {
				l := f.Location
				if l == nil || l.Line < 1 {
					t.Errorf("%s: location %+v, want a file and line", f.ID, l)
					continue
				}
				if filepath.Dir(l.File) != dir {
					t.Errorf("%s: file %s, not of the pair in %s", f.ID, l.File, dir)
				}
				data, err := os.ReadFile(l.File)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(string(data), "\n")
				if int(l.Line) > len(lines) {
					t.Errorf("%s: line %d of a %d-line file", f.ID, l.Line, len(lines))
					continue
				}
				if kind, _, ok := strings.Cut(f.Object, "/"); ok && !strings.Contains(objectAt(lines, int(l.Line)), "kind: "+kind) {
					t.Errorf("%s names %s but points at %s:%d", f.ID, f.Object, l.File, l.Line)
				}
			}
			doc := sariftest.Decode(t, finding.SARIF(finding.Tool{Name: "credwatch preflight"}, r.Findings))
			sariftest.Validate(t, doc)
			for _, res := range sariftest.Results(doc) {
				locs, _ := res.(map[string]any)["locations"].([]any)
				if len(locs) == 0 || locs[0].(map[string]any)["physicalLocation"] == nil {
					t.Errorf("SARIF result without a physical location: %v", res)
				}
			}
		})
	}
}

// objectAt is the document that begins on line n (from 1) of lines.
func objectAt(lines []string, n int) string {
	var b strings.Builder
	for _, l := range lines[n-1:] {
		if strings.HasPrefix(l, "---") {
			break
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}
