// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNotRegular is returned by WriteFile when the target exists and is not a regular file (a
// symbolic link, a directory, a device, a FIFO).
var ErrNotRegular = errors.New("exists and is not a regular file")

// WriteFile writes a token to path with mode 0600 whatever the mode of a file it replaces. It
// writes a temporary file in path's directory and renames it over path, so a reader never sees
// a partial token and a symbolic link at path is never followed: an existing path that is not a
// regular file is refused with ErrNotRegular (and a link planted between the check and the
// rename is replaced, not followed).
func WriteFile(path string, data []byte) error {
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("write token %s: %w (%s)", path, ErrNotRegular, st.Mode().Type())
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	// CreateTemp opens with O_EXCL and mode 0600.
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write token %s: %w", path, pathErr(err))
	}
	tmp := f.Name()
	err = writeSync(f, data)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write token %s: %w", path, pathErr(err))
	}
	return nil
}

// writeSync writes data to f, forces mode 0600 (a umask can only clear bits, but the temporary
// file is the one that stays), syncs and closes it.
func writeSync(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
