// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package steps

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/credwatch/credwatch/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestWriteTable prints the committed runs of every era (docs/evidence) as `credwatch lab
// scenario` does; every line fits 120 columns.
func TestWriteTable(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "docs", "evidence", "cloud-password-rotated-*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no committed evidence under docs/evidence: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var ev Evidence
			if err := json.Unmarshal(data, &ev); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var b bytes.Buffer
			if err := ev.WriteTable(&b); err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(b.String(), "\n") {
				if n := utf8.RuneCountInString(strings.TrimRight(l, " ")); n > 120 {
					t.Errorf("line of %d columns: %s", n, l)
				}
			}
			for _, s := range ev.Steps {
				if !strings.Contains(b.String(), "\n"+s.Name+" ") {
					t.Errorf("step %s has no row", s.Name)
				}
			}
			golden.Check(t, filepath.Join("testdata", strings.TrimSuffix(filepath.Base(f), ".json")+".table"), b.Bytes(), *update)
		})
	}
}
