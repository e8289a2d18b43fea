// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package golden compares a test's output with a file under testdata, or rewrites the file
// when the test binary runs with -update (each test package declares its own flag and passes
// its value: a package-level flag here would clash with theirs).
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Check fails t when got differs from the file at path, or writes got there when update is set.
func Check(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run the test with -update to rewrite it, then review the diff):\n%s", path, got)
	}
}
