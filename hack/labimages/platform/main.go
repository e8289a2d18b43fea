// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command platform is the lab's stand-in for a platform team's controller (package
// pkg/lab/platform): a leader-election Lease, an informer and writes with its own projected
// service-account token through client-go's in-cluster configuration. It exits 1 when it loses
// its Lease, as a controller-runtime manager does. Built static into an image by pkg/lab/image.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/lab/platform"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "platform:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	c := platform.Config{Pod: os.Getenv("HOSTNAME"), Namespace: os.Getenv("POD_NAMESPACE")}
	fs := flag.NewFlagSet("platform", flag.ContinueOnError)
	fs.StringVar(&c.Name, "name", "", "the Lease's name (required)")
	fs.StringVar(&c.Namespace, "namespace", c.Namespace, "the namespace (default $POD_NAMESPACE)")
	fs.DurationVar(&c.Interval, "interval", 0, "time between writes while leading (default 2s)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rc, err := rest.InClusterConfig()
	if err != nil {
		return err
	}
	rc.Timeout = 10 * time.Second // a call that hangs on a member without storage ends, as client-go callers set
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return platform.Run(ctx, c, cs, os.Stdout) // platform.ErrLostLease: exit 1, restarted
}
