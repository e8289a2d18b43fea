// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build !linux

package scan

import "os"

// Mapping maps files on Linux only; elsewhere Map declines and files are read.
type Mapping struct{}

// MapMinimum is the file size from which Linux maps a file.
const MapMinimum = 8 << 20

// ReleaseBatch is how many bytes of finished blocks Linux drops at once.
const ReleaseBatch = 8 << 20

// Map declines: files are read.
func Map(*os.File) (*Mapping, bool) { return nil, false }

// Data is nil.
func (*Mapping) Data() []byte { return nil }

// Hold does nothing.
func (*Mapping) Hold() {}

// Release does nothing.
func (*Mapping) Release(lo, hi int) {}

// Close does nothing.
func (*Mapping) Close() error { return nil }
