// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package limits

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Bounds shared by the commands. A real input comes nowhere near them.
const (
	// Response bounds one HTTP response body credwatch reads whole: a list page (500 items, a
	// few MB), a discovery document, a JWKS. Several are read at once, so it is not larger.
	Response = 16 << 20
	// Metrics bounds a /metrics document, the largest a member serves (tens of MB on big
	// clusters); one per member is read at a time.
	Metrics = 64 << 20
	// Kubeconfig bounds each kubeconfig file and the files it names (token, CA, client key).
	Kubeconfig = 16 << 20
	// File bounds a small input file a flag names: a token, a CA bundle, a key.
	File = 4 << 20
	// Dir bounds the sum of the files read from a directory a flag names (preflight's
	// --current and --planned): each is bounded by File, and a real control plane's
	// objects are a few hundred KB.
	Dir = 64 << 20
)

// ErrTooLarge is wrapped by every *TooLargeError (errors.Is).
var ErrTooLarge = errors.New("too large")

// TooLargeError says that Name (a path, or host and path of a response) is larger than Max bytes.
type TooLargeError struct {
	Name     string
	Max      int64
	Response bool // Name is a response, not a file
}

func (e *TooLargeError) Error() string {
	if e.Response {
		return fmt.Sprintf("response from %s larger than %s", e.Name, Size(e.Max))
	}
	return fmt.Sprintf("%s: larger than %s", e.Name, Size(e.Max))
}

func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// Size spells n bytes as a whole number of MiB or KiB when it is one, else as bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Stat fails with a *TooLargeError when path is a regular file larger than max. A missing or
// special file (a pipe, /dev/stdin) passes: the caller's read reports it, and ReadFile bounds it.
func Stat(path string, max int64) error {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	if st.Size() > max {
		return &TooLargeError{Name: path, Max: max}
	}
	return nil
}

// ReadFile reads path, failing with a *TooLargeError without reading it when it is a regular file
// larger than max, and after max+1 bytes when it is not regular (a pipe) or grew. Errors name
// path once.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, pathErr(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, pathErr(err))
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	if st.Mode().IsRegular() && st.Size() > max {
		return nil, &TooLargeError{Name: path, Max: max}
	}
	data, err := ReadAll(path, f, max)
	if err != nil && !errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("%s: %w", path, pathErr(err))
	}
	return data, err
}

// ReadAll reads r, the file or stream name, failing with a *TooLargeError after max+1 bytes. A
// read error is returned as r gave it.
func ReadAll(name string, r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Name: name, Max: max}
	}
	return data, nil
}

// pathErr drops the *os.PathError's own copy of the path, which the caller's message names.
func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
