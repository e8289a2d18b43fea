// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReferenceCurrent: docs/reference is what the command tree generates. After changing a
// command, run `go run ./hack/docgen docs/reference` (make docs).
func TestReferenceCurrent(t *testing.T) {
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	committed := filepath.Join("..", "..", "docs", "reference")
	want, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	have, _ := filepath.Glob(filepath.Join(committed, "*.md"))
	if len(want) == 0 {
		t.Fatal("nothing generated")
	}
	if len(want) != len(have) {
		t.Errorf("docs/reference has %d pages, the command tree makes %d: run make docs", len(have), len(want))
	}
	for _, f := range want {
		got, err := os.ReadFile(filepath.Join(committed, filepath.Base(f)))
		if err != nil {
			t.Errorf("%s: %v: run make docs", filepath.Base(f), err)
			continue
		}
		gen, _ := os.ReadFile(f)
		if string(got) != string(gen) {
			t.Errorf("docs/reference/%s is stale: run make docs", filepath.Base(f))
		}
	}
}
