//go:build unix

package userfile

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// safety bounds every wait in these tests so that a regression fails instead of hanging; it
// is not a claim about speed.
const safety = 30 * time.Second

func mkfifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	return p
}

// holdWriter opens the FIFO at p for reading and writing (which does not block on Linux) so a
// reader's open returns but its reads wait for data that never comes.
func holdWriter(t *testing.T, p string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Skip("open FIFO read-write:", err)
	}
	t.Cleanup(func() { f.Close() })
}

// TestCancel runs a read that blocks forever and cancels its context: it must return the
// cancellation error.
func TestCancel(t *testing.T) {
	tests := []struct {
		name string
		read func(t *testing.T, ctx context.Context) error
	}{
		{"FIFO without a writer: open blocks", func(t *testing.T, ctx context.Context) error {
			rc, err := Open(ctx, mkfifo(t))
			if err == nil {
				rc.Close()
			}
			return err
		}},
		{"FIFO whose writer never writes: read blocks", func(t *testing.T, ctx context.Context) error {
			p := mkfifo(t)
			holdWriter(t, p)
			rc, err := Open(ctx, p)
			if err != nil {
				return err
			}
			defer rc.Close()
			_, err = io.ReadAll(rc)
			return err
		}},
		{"pipe that never closes, as stdin", func(t *testing.T, ctx context.Context) error {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() })
			_, err = io.ReadAll(Stdin(ctx, r))
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
	rc, err := Open(ctx, reg)
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
	if got := Stdin(ctx, f); got != io.Reader(f) {
		t.Errorf("Stdin(regular file) = %T, want the file itself", got)
	}

	tests := []struct {
		name string
		src  func(t *testing.T) io.Reader
	}{
		{"FIFO with data", func(t *testing.T) io.Reader {
			p := mkfifo(t)
			go func() {
				w, err := os.OpenFile(p, os.O_WRONLY, 0)
				if err == nil {
					w.WriteString("line\n")
					w.Close()
				}
			}()
			rc, err := Open(ctx, p)
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
			return Stdin(ctx, r)
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
