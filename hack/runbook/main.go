// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command runbook writes docs/runbook.md: the prose of runbook.md.tmpl with every command output
// rendered by the current code from committed evidence, and every remedy taken from the
// catalogue. A test (TestRunbookCurrent) keeps the committed page current.
//
//	go run ./hack/runbook render docs/runbook.md      (make docs; seconds, no lab)
//	go run ./hack/runbook capture hack/runbook/testdata/lab [STEP...]   (make runbook-capture; a real lab, minutes)
//
// render re-renders committed inputs: the check and watch snapshots and tokens `capture` took
// from a lab, the lab scenarios' apiserver logs (pkg/logs/testdata/lab), the field corpus
// (pkg/logs/testdata/field) and a vcsim vCenter started in-process. Run it from the repository root.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"
)

func main() {
	if len(os.Args) < 3 || (os.Args[1] != "render" || len(os.Args) != 3) && os.Args[1] != "capture" {
		fmt.Fprintln(os.Stderr, "usage: runbook render OUT.md | runbook capture DIR [STEP...]")
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	var err error
	switch os.Args[1] {
	case "render":
		err = renderFile(ctx, os.Args[2])
	case "capture":
		ctx, cancelT := context.WithTimeout(ctx, 10*time.Minute)
		defer cancelT()
		err = capture(ctx, os.Args[2], os.Args[3:]...)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "runbook %s: %v\n", os.Args[1], err)
		cancel()
		os.Exit(1)
	}
}
