// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package userfile

import (
	"context"
	"os"

	"github.com/credwatch/credwatch/pkg/limits"
)

// ReadFile is limits.ReadFile for a file the user names: a regular file is read as it does
// (bounded to max bytes, errors naming path once); anything else (a FIFO, a device) is opened
// and read through Open, so that cancelling ctx abandons it with the context's cause.
func ReadFile(ctx context.Context, path string, max int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil || st.Mode().IsRegular() || st.IsDir() {
		return limits.ReadFile(path, max) // it names a missing file, a directory, a large file
	}
	rc, err := openSpecial(ctx, path, st.Mode())
	if err != nil {
		return nil, err // "open PATH: context canceled"
	}
	defer rc.Close()
	return limits.ReadAll(path, rc, max) // its read errors name path: "read PATH: context canceled"
}
