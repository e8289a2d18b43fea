// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command pause is the sandbox ("pause") image of the lab's nodes, tagged as containerd's
// sandbox_image: it holds the pod's namespaces by sleeping until SIGTERM or SIGINT, then exits 0.
// Built static (CGO_ENABLED=0) into an image by pkg/lab/image.
package main

import (
	"context"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	<-ctx.Done()
}
