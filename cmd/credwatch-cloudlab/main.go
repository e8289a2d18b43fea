// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command credwatch-cloudlab runs the cloud lab's scenario cloud-password-rotated in one era
// (vSphere in-tree or external, or OpenStack with a real Keystone) and prints its step evidence
// as JSON on stdout (progress on stderr). `credwatch lab scenario
// cloud-password-rotated` runs it: the lab's vCenter is govmomi's simulator, which weighs 25 MB,
// so it lives in this program and not in the credwatch binary. `make build` builds both.
//
// Exit codes: 0 the scenario ran, 1 it failed (the evidence so far is still printed), 2 bad flags.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/cloudlab"
	"github.com/credwatch/credwatch/pkg/redact"
)

func main() {
	os.Exit(redacted(os.Args[1:], os.Stdout, os.Stderr))
}

// redacted runs the program with stdout and stderr through credwatch's one redaction path, the
// account's passwords known to it, as credwatch's own streams are.
func redacted(args []string, stdout, stderr io.Writer) int {
	known := &redact.Known{}
	known.Add(cloudlab.DefaultPassword, cloudlab.NewPassword)
	out, errOut := redact.NewWriter(stdout, known), redact.NewWriter(stderr, known)
	code := run(args, out, errOut, known)
	if err := out.Flush(); err != nil && code == 0 {
		code = 1
	}
	_ = errOut.Flush()
	return code
}

func run(args []string, stdout, stderr io.Writer, known *redact.Known) int {
	fs := flag.NewFlagSet("credwatch-cloudlab", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o cloudlab.StartOptions
	quiet := fs.Bool("q", false, "no progress lines")
	fs.StringVar(&o.Era, "era", cloudlab.InTree, fmt.Sprintf("the era: %v", cloudlab.Eras()))
	fs.StringVar(&o.Dir, "dir", "", "lab state directory, short (required)")
	fs.StringVar(&o.BinDir, "bin-dir", "", "lab binaries (default: $CREDWATCH_LAB_BIN or .lab-cache/bin)")
	fs.DurationVar(&o.Window, "window", 15*time.Second, "how long each step watches")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case !slices.Contains(cloudlab.Eras(), o.Era):
		fmt.Fprintf(stderr, "credwatch-cloudlab: -era %q: want one of %v\n", o.Era, cloudlab.Eras())
		return 2
	case o.Dir == "":
		fmt.Fprintln(stderr, "credwatch-cloudlab: -dir: required")
		return 2
	case o.Window < time.Second || o.Window > 10*time.Minute:
		fmt.Fprintf(stderr, "credwatch-cloudlab: -window %s: want 1s..10m\n", o.Window)
		return 2
	}
	if !*quiet {
		o.Log = stderr
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	env, stop, err := cloudlab.Start(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "credwatch-cloudlab: %v\n", err)
		return 1
	}
	known.Add(env.Secrets...) // the era's own passwords (Keystone's administrator and service user)
	ev, err := cloudlab.Run(ctx, env)
	downCtx, done := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer done()
	if derr := stop(downCtx); derr != nil && err == nil {
		err = fmt.Errorf("stop lab: %w", derr)
	}
	if ev != nil {
		if jerr := json.NewEncoder(stdout).Encode(ev); jerr != nil && err == nil {
			err = jerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "credwatch-cloudlab: %v\n", err)
		return 1
	}
	return 0
}
