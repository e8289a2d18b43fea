// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// regular.go: opening a file that must be regular (watch --log-file, --report) without ever
// blocking, refusing a FIFO, device or socket with ErrNotRegular.

package userfile

import (
	"errors"
	"io/fs"
	"os"
)

// ErrNotRegular is the error (inside an *fs.PathError) for a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// OpenRead opens the regular file path for reading.
func OpenRead(path string) (*os.File, error) {
	if err := statRegular(path); err != nil {
		return nil, err
	}
	// O_NONBLOCK: should path have become a FIFO since the stat, opening returns at once.
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(f, path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenWrite opens the regular file path for writing, creating it with perm when it does not
// exist; an existing file is neither truncated nor otherwise changed. created says it was made
// here, so that a caller that ends up writing nothing can remove it.
func OpenWrite(path string, perm fs.FileMode) (f *os.File, created bool, err error) {
	f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|nonBlock, perm)
	if err == nil {
		return f, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, false, err
	}
	if err := statRegular(path); err != nil {
		return nil, false, err
	}
	f, err = os.OpenFile(path, os.O_WRONLY|nonBlock, 0)
	if err != nil {
		return nil, false, err
	}
	if err := checkRegular(f, path); err != nil {
		f.Close()
		return nil, false, err
	}
	return f, false, nil
}

func statRegular(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return nil
}

func checkRegular(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return nil
}
