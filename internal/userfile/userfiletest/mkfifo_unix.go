// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build unix

package userfiletest

import (
	"syscall"
	"testing"
)

// MkFIFO makes a FIFO at path, failing the test when it cannot.
func MkFIFO(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal("mkfifo:", err)
	}
}
