// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build unix

package userfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/userfile/userfiletest"
)

// done fails the test when open has not returned after a minute: a FIFO opened without
// O_NONBLOCK waits forever for its other end (a guard against a hang, not a timing bound).
func done[T any](t *testing.T, open func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- open() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatal("open blocked")
		panic("unreachable")
	}
}

func TestOpenRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("kept\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	userfiletest.MkFIFO(t, fifo)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name        string
		path        string
		read, write error // the error wanted (errors.Is); nil: opens
		created     bool
	}{
		{"regular", regular, nil, nil, false},
		{"symlink to a regular file", link, nil, nil, false},
		{"fifo", fifo, ErrNotRegular, ErrNotRegular, false},
		{"directory", dir, ErrNotRegular, ErrNotRegular, false},
		{"character device", os.DevNull, ErrNotRegular, ErrNotRegular, false},
		{"missing", filepath.Join(dir, "new"), fs.ErrNotExist, nil, true},
		{"missing folder", filepath.Join(dir, "no", "new"), fs.ErrNotExist, fs.ErrNotExist, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := done(t, func() error {
				f, err := OpenRead(tt.path)
				if err == nil {
					f.Close()
				}
				return err
			})
			if !errors.Is(err, tt.read) || (err == nil) != (tt.read == nil) {
				t.Errorf("OpenRead: %v, want %v", err, tt.read)
			}
			type result struct {
				created bool
				err     error
			}
			r := done(t, func() result {
				f, created, err := OpenWrite(tt.path, 0o600)
				if err == nil {
					f.Close()
				}
				return result{created, err}
			})
			if !errors.Is(r.err, tt.write) || (r.err == nil) != (tt.write == nil) || r.created != tt.created {
				t.Errorf("OpenWrite: created %v, %v; want %v, %v", r.created, r.err, tt.created, tt.write)
			}
		})
	}
	if b, err := os.ReadFile(regular); err != nil || string(b) != "kept\n" {
		t.Errorf("OpenWrite changed an existing file: %q, %v", b, err)
	}
}
