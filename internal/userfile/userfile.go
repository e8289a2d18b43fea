// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package userfile opens and reads the files a user names on the command line (and stdin) so
// that cancelling the command's context abandons them: a FIFO nobody writes to blocks open(2),
// and a pipe that never closes blocks read(2), and neither looks at a context. Regular files
// take the plain path (os.Open, the *os.File itself), so callers that map or read them directly
// lose nothing. Where a file must be regular (watch's --log-file and --report), OpenRead and
// OpenWrite refuse anything else with ErrNotRegular, and their opens cannot block either.
package userfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// wakeAttempts bounds how long an abandoned FIFO open is helped to return (every 10 ms): the
// FIFO may have been removed meanwhile, and then its open is left to whoever writes to it.
const wakeAttempts = 100

// Open opens path for reading. A regular file or a directory is os.Open's *os.File. Anything
// else (a FIFO, a device) is opened and read so that cancelling ctx makes a blocked open or Read
// return the context's cause; the result is then not an *os.File.
func Open(ctx context.Context, path string) (io.ReadCloser, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().IsRegular() || st.IsDir() {
		return os.Open(path)
	}
	return openSpecial(ctx, path, st.Mode())
}

type opened struct {
	f   *os.File
	err error
}

// openSpecial runs the open in its own goroutine and stops waiting when ctx is done. An
// abandoned FIFO open is woken by opening the FIFO for writing (without blocking) and closing
// it again, so the goroutine ends and its file is closed.
func openSpecial(ctx context.Context, path string, mode os.FileMode) (io.ReadCloser, error) {
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return newFileReader(ctx, r.f), nil
	case <-ctx.Done():
	}
	cause := fmt.Errorf("open %s: %w", path, context.Cause(ctx))
	if mode&os.ModeNamedPipe != 0 {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for range wakeAttempts {
			wakeFIFO(path)
			select {
			case r := <-ch:
				if r.f != nil {
					r.f.Close()
				}
				return nil, cause
			case <-tick.C:
			}
		}
	}
	go func() {
		if r := <-ch; r.f != nil {
			r.f.Close()
		}
	}()
	return nil, cause
}

// fileReader reads a non-regular file. When the runtime poller handles the file (FIFOs,
// terminals and sockets on Linux), cancelling ctx sets a read deadline in the past, which makes
// a blocked Read return; otherwise reads go through a Reader.
type fileReader struct {
	ctx  context.Context
	f    *os.File
	r    io.Reader
	stop func() bool
}

func newFileReader(ctx context.Context, f *os.File) *fileReader {
	fr := &fileReader{ctx: ctx, f: f, r: f}
	if f.SetReadDeadline(time.Time{}) == nil {
		fr.stop = context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })
	} else {
		fr.r, fr.stop = Reader(ctx, f), func() bool { return true }
	}
	return fr
}

func (fr *fileReader) Read(p []byte) (int, error) {
	n, err := fr.r.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) && fr.ctx.Err() != nil {
		err = fmt.Errorf("read %s: %w", fr.f.Name(), context.Cause(fr.ctx))
	}
	return n, err
}

func (fr *fileReader) Close() error {
	fr.stop()
	return fr.f.Close()
}

// Stdin returns in for reading under ctx: a regular file (stdin redirected from a file) as it
// is, anything else through a Reader.
func Stdin(ctx context.Context, in io.Reader) io.Reader {
	if f, ok := in.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			return in
		}
	}
	return Reader(ctx, in)
}

// Reader returns a reader whose Read returns the cause of ctx as soon as ctx is done, even while
// r's Read is blocked. Each Read runs in a goroutine that reads into a buffer of the reader's
// own; once a Read has been abandoned that goroutine keeps the buffer, and every later Read
// returns the same error. With a context that is never done, reads go straight to r.
func Reader(ctx context.Context, r io.Reader) io.Reader {
	if ctx.Done() == nil {
		return r
	}
	return &ctxReader{ctx: ctx, r: r, res: make(chan result, 1)}
}

type result struct {
	n   int
	err error
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
	buf []byte
	res chan result
	err error // sticky, once abandoned
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if err := c.ctx.Err(); err != nil {
		c.err = fmt.Errorf("read: %w", context.Cause(c.ctx))
		return 0, c.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if cap(c.buf) < len(p) {
		c.buf = make([]byte, len(p))
	}
	buf := c.buf[:len(p)]
	go func() {
		n, err := c.r.Read(buf)
		c.res <- result{n, err}
	}()
	select {
	case r := <-c.res:
		return copy(p, buf[:r.n]), r.err
	case <-c.ctx.Done():
		c.err = fmt.Errorf("read: %w", context.Cause(c.ctx))
		return 0, c.err
	}
}
