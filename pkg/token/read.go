// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/credwatch/credwatch/internal/userfile"
	"github.com/credwatch/credwatch/pkg/limits"
)

// Read reads a token from path: "-" is stdin, a directory is a mounted service-account volume
// (its "token" file). It returns the token text and the name of what was read. Reading stops
// past MaxSize so a huge input fails fast with ErrTooLarge. Cancelling ctx abandons an open or
// read that blocks (a FIFO, a pipe that never closes) with an error wrapping the context's cause.
func Read(ctx context.Context, path string, stdin io.Reader) (string, string, error) {
	var r io.Reader
	name := path
	switch path {
	case "-", "":
		r, name = userfile.Stdin(ctx, stdin), "stdin"
	default:
		st, err := os.Stat(path)
		if err != nil {
			return "", path, fmt.Errorf("read token %s: %w", path, pathErr(err))
		}
		if st.IsDir() {
			name = filepath.Join(path, "token")
		}
		f, err := userfile.Open(ctx, name)
		if err != nil {
			return "", name, fmt.Errorf("read token %s: %w", name, pathErr(err))
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return "", name, fmt.Errorf("read token %s: %w", name, pathErr(err))
	}
	if len(data) > MaxSize {
		return "", name, fmt.Errorf("read token %s: %w", name, decodeErr(ErrTooLarge, "", "larger than %s", limits.Size(MaxSize)))
	}
	return string(data), name, nil
}

func pathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
