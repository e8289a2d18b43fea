// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build unix

package userfile

import "syscall"

// wakeFIFO lets a blocked open(2) of the FIFO at path for reading return: it opens the FIFO for
// writing without blocking (which succeeds only while a reader waits) and closes it again.
func wakeFIFO(path string) {
	if fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0); err == nil {
		_ = syscall.Close(fd)
	}
}
