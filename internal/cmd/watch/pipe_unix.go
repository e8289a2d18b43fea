// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build unix

package watch

import (
	"context"
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// readerGone returns ctx cancelled with errReaderGone as soon as out, a pipe, has no reader left
// (`watch | head` after head exits): poll(2) reports POLLERR on a pipe's write end then, without
// writing. Without it a watch that has no event to print would poll a cluster for no one until
// its next line met EPIPE. For anything else (a terminal, a file, a test's buffer) ctx is only
// made cancellable. The returned func releases the poller.
func readerGone(ctx context.Context, out io.Writer) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	release := func() { cancel(nil) }
	f, ok := out.(*os.File)
	if !ok {
		return ctx, release
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return ctx, release
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return ctx, release
	}
	go func() {
		for ctx.Err() == nil {
			gone := false
			_ = rc.Control(func(fd uintptr) {
				fds := []unix.PollFd{{Fd: int32(fd)}} // no events asked: POLLERR and POLLHUP always come
				n, err := unix.Poll(fds, 200)
				gone = err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
				if errors.Is(err, syscall.EBADF) {
					gone = true
				}
			})
			if gone {
				cancel(errReaderGone)
				return
			}
		}
	}()
	return ctx, release
}
