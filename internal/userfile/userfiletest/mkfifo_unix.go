//go:build unix

package userfiletest

import (
	"syscall"
	"testing"
)

// MkFIFO makes a FIFO at path, or skips the test where FIFOs cannot be made.
func MkFIFO(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
}
