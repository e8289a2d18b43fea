// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build unix

package userfile

import "syscall"

// nonBlock makes opening a FIFO return at once (reading: with no writer; writing: ENXIO without
// a reader) instead of waiting for the other end.
const nonBlock = syscall.O_NONBLOCK
