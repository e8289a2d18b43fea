// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build !unix

package userfile

// nonBlock is 0 where opening a path does not wait for a pipe's other end.
const nonBlock = 0
