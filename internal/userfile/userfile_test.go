// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build unix

package userfile_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/userfile"
	"github.com/credwatch/credwatch/internal/userfile/userfiletest"
)

// safety bounds every wait in these tests so that a regression fails instead of hanging; it
// is not a claim about speed.
const safety = 30 * time.Second

// TestCancel runs a read that blocks forever and cancels its context: it must return the
// cancellation error.
func TestCancel(t *testing.T) {
	tests := []struct {
		name string
		read func(t *testing.T, ctx context.Context) error
	}{
		{"FIFO without a writer: open blocks", func(t *testing.T, ctx context.Context) error {
			rc, err := userfile.Open(ctx, userfiletest.FIFO(t, "fifo", false))
			if err == nil {
				rc.Close()
			}
			return err
		}},
		{"FIFO whose writer never writes: read blocks", func(t *testing.T, ctx context.Context) error {
			rc, err := userfile.Open(ctx, userfiletest.FIFO(t, "fifo", true))
			if err != nil {
				return err
			}
			defer rc.Close()
			_, err = io.ReadAll(rc)
			return err
		}},
		{"pipe that never closes, as stdin", func(t *testing.T, ctx context.Context) error {
			_, err := io.ReadAll(userfile.Stdin(ctx, userfiletest.Pipe(t)))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- tt.read(t, ctx) }()
			time.Sleep(20 * time.Millisecond) // let it block (it also passes when it has not yet)
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("got %v, want context.Canceled", err)
				}
			case <-time.After(safety):
				t.Fatal("still blocked after cancel")
			}
		})
	}
}

// TestPlain checks that what needs no help is left alone: a regular file is the *os.File (logs
// maps it), stdin redirected from a file is the file, and data arrives whole.
func TestPlain(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "reg")
	if err := os.WriteFile(reg, []byte("line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc, err := userfile.Open(ctx, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, ok := rc.(*os.File); !ok {
		t.Errorf("Open(regular file) = %T, want *os.File", rc)
	}
	f, err := os.Open(reg)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := userfile.Stdin(ctx, f); got != io.Reader(f) {
		t.Errorf("Stdin(regular file) = %T, want the file itself", got)
	}

	tests := []struct {
		name string
		src  func(t *testing.T) io.Reader
	}{
		{"FIFO with data", func(t *testing.T) io.Reader {
			p := userfiletest.FIFO(t, "fifo", false)
			go func() {
				w, err := os.OpenFile(p, os.O_WRONLY, 0)
				if err == nil {
					w.WriteString("line\n")
					w.Close()
				}
			}()
			rc, err := userfile.Open(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rc.Close() })
			return rc
		}},
		{"pipe with data", func(t *testing.T) io.Reader {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			w.WriteString("line\n")
			w.Close()
			t.Cleanup(func() { r.Close() })
			return userfile.Stdin(ctx, r)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := io.ReadAll(tt.src(t))
			if err != nil || string(b) != "line\n" {
				t.Fatalf("read %q, %v; want %q", b, err, "line\n")
			}
		})
	}
}
