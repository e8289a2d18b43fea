// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package userfiletest makes inputs that block forever, for tests that cancel a command's
// context and expect it to return: a FIFO nobody writes to, a FIFO whose writer never writes,
// and a pipe that never closes.
package userfiletest

import (
	"os"
	"path/filepath"
	"testing"
)

// FIFO makes a FIFO named name in a temporary directory. With writer, the test holds it open
// for writing (and reading, so that this open does not block), so a reader's open returns but
// its reads wait; without, a reader's open waits. It skips the test on systems without FIFOs;
// elsewhere a FIFO that cannot be made fails it.
func FIFO(t testing.TB, name string, writer bool) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	MkFIFO(t, p)
	if writer {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal("open FIFO read-write:", err)
		}
		t.Cleanup(func() { f.Close() })
	}
	return p
}

// Pipe returns the read end of a pipe whose write end stays open until the test ends.
func Pipe(t testing.TB) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r
}
