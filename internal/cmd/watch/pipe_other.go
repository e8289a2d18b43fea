// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build !unix

package watch

import (
	"context"
	"io"
)

// readerGone only makes ctx cancellable where poll(2) is not available: a closed pipe shows at
// the next write.
func readerGone(ctx context.Context, _ io.Writer) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	return ctx, func() { cancel(nil) }
}
