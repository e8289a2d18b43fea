// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package catalogue_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// TestCatalogueIDsInCode finds every catalogue ID the code names literally (finding.New with an ID literal,
// MustGet, Get) and checks the catalogue has it, so a typo fails here rather than
// panicking in a run.
func TestCatalogueIDsInCode(t *testing.T) {
	re := regexp.MustCompile(`(?:finding\.New|MustGet|catalogue\.Default\(\)\.Get)\(\s*"([a-z0-9-]+)"`)
	c := catalogue.Default()
	root := filepath.Join("..", "..")
	seen := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata" || d.Name() == "hack") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			seen++
			if _, ok := c.Get(string(m[1])); !ok {
				t.Errorf("%s names catalogue ID %q, which the catalogue lacks", path, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("found no catalogue IDs in code; the pattern is stale")
	}
}
