// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package limits bounds what credwatch reads from outside: files the user names and HTTP response
// bodies. Every bound that is exceeded is a *TooLargeError naming what was read and the bound, so
// a hostile server or a careless path costs at most the bound in memory, and the user is told
// which input it was.
package limits
