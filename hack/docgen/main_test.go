// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"os"
	"path/filepath"
	"strings"
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

// TestFormats: the formats page has one row per command with -o, marking what it accepts and no
// more (watch has no yaml: its -o json is JSON Lines), and names the commands without -o.
func TestFormats(t *testing.T) {
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, formatsPage))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, tt := range []struct {
		command, row string
	}{
		{"check", "| [`credwatch check`](credwatch_check.md) | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ | table |"},
		{"watch", "| [`credwatch watch`](credwatch_watch.md) | ✓ | ✓ | ✓ |  |  |  |  | table |"},
		{"logs", "| [`credwatch logs`](credwatch_logs.md) | ✓ | ✓ | ✓ | ✓ | ✓ | ✓ |  | table |"},
		{"keys jwks", "| [`credwatch keys jwks`](credwatch_keys_jwks.md) | ✓ | ✓ | ✓ | ✓ |  |  |  | json |"},
	} {
		if !strings.Contains(page, "\n"+tt.row+"\n") {
			t.Errorf("%s: no row %q in:\n%s", tt.command, tt.row, page)
		}
	}
	for _, absent := range []string{"`credwatch keys`", "`credwatch completion bash`", "`credwatch help`"} {
		if strings.Contains(page, absent) {
			t.Errorf("%s is listed: it is a group or cobra's own", absent)
		}
	}
	if !strings.Contains(page, "`credwatch lab up`") {
		t.Error("lab up, which has no -o, is not named")
	}
}
