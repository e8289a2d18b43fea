// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package tokenarg reads the [FILE|-|DIR] argument of token inspect and token verify: the token
// from FILE, from stdin ("-", the default), or from DIR/token of a service-account volume.
package tokenarg

import (
	"context"
	"io"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/token"
)

// Path is the argument the command was given, "-" without one.
func Path(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return "-"
}

// Decode reads the token at path (stdin for "-") and decodes it, without trusting it; name is
// what messages call it. Every error is a usage error, except when ctx ended the read (a signal):
// then it is returned as it is, for exit 130.
func Decode(ctx context.Context, path string, stdin io.Reader) (t *token.Token, name string, err error) {
	raw, name, err := token.Read(ctx, path, stdin)
	if err != nil && ctx.Err() != nil {
		return nil, "", err
	}
	if err != nil {
		return nil, "", cli.Usage(err)
	}
	if t, err = token.Decode(raw); err != nil {
		return nil, "", cli.Usagef("%s: %w", name, err)
	}
	return t, name, nil
}
