// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command tenant is the workload of the lab's tenant pods: it presents the projected
// service-account token the kubelet wrote to the API through the kubernetes Service in a loop and
// writes one JSON line per call (status, serving member, 401 reason) and periodic summaries to
// stdout. See pkg/lab/workload. Built static (CGO_ENABLED=0) into an image by pkg/lab/image.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/credwatch/credwatch/pkg/lab/workload"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tenant:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	var c workload.Config
	fs := flag.NewFlagSet("tenant", flag.ContinueOnError)
	fs.StringVar(&c.URL, "url", "", "API URL (default https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)")
	fs.StringVar(&c.TokenFile, "token-file", workload.DefaultTokenFile, "projected service-account token, re-read before every call")
	fs.StringVar(&c.CAFile, "ca-file", workload.DefaultCAFile, "cluster CA bundle")
	fs.DurationVar(&c.Interval, "interval", 0, "time between calls (default 1s)")
	fs.DurationVar(&c.Timeout, "timeout", 0, "per-call timeout (default 5s)")
	fs.DurationVar(&c.Summary, "summary", 0, "time between summary lines (default 30s)")
	fs.IntVar(&c.Calls, "calls", 0, "stop after this many calls (0: until SIGTERM)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := c.Complete(os.Getenv); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return workload.Run(ctx, c, os.Stdout)
}
