// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build unix

package watch

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/userfile"

	"github.com/credwatch/credwatch/internal/userfile/userfiletest"
)

// A FIFO (or a path replaced by one) is an error of that file's, and polling it does not block:
// before, opening a FIFO with no writer hung the interval loop for good.
func TestTailerFIFO(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "log")
	userfiletest.MkFIFO(t, path)
	tl := newTailer(path)
	defer tl.close()
	done := make(chan error, 1)
	go func() {
		_, err := tl.poll()
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, userfile.ErrNotRegular) {
			t.Fatalf("poll: %v, want %v", err, userfile.ErrNotRegular)
		}
	case <-time.After(time.Minute): // a hang guard, not a timing bound
		t.Fatal("poll blocked on a FIFO")
	}
}
