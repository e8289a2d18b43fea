// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command ociimage writes the credwatch release image — static binaries already built for each
// platform — as an OCI image layout tarball holding one multi-platform index. `make image` runs it
// through hack/image.sh:
//
//	go run ./hack/ociimage -out bin/credwatch-image.tar -created $SOURCE_DATE_EPOCH \
//	  -version v1.2.3 -revision $(git rev-parse HEAD) \
//	  -binary linux/amd64=/tmp/credwatch-amd64 -binary linux/arm64=/tmp/credwatch-arm64
//
// The image is from scratch plus the Mozilla CA bundle, runs as 65532:65532, and is byte-identical
// for the same binaries and -created. It prints the index digest and each image's size.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/ociimage"
)

type options struct {
	out, name, source, revision, version string
	created                              int64
	binaries                             []string // OS/ARCH=PATH
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ociimage:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	var o options
	fs := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	fs.StringVar(&o.out, "out", "bin/credwatch-image.tar", "OCI layout tarball to write")
	fs.StringVar(&o.name, "name", "credwatch", "program name: installed as /usr/local/bin/NAME, the entrypoint")
	fs.StringVar(&o.source, "source", "https://github.com/credwatch/credwatch", "org.opencontainers.image.source")
	fs.StringVar(&o.revision, "revision", "", "org.opencontainers.image.revision (the commit)")
	fs.StringVar(&o.version, "version", "", "org.opencontainers.image.version, also the layout's ref name")
	fs.Int64Var(&o.created, "created", -1, "creation time and file mtimes, Unix seconds (the commit time, SOURCE_DATE_EPOCH)")
	fs.Func("binary", "OS/ARCH=PATH of a static binary (repeat per platform)", func(s string) error {
		o.binaries = append(o.binaries, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.created < 0 {
		return fmt.Errorf("-created is required (Unix seconds of the commit): the image must not carry the build time")
	}
	if len(o.binaries) == 0 {
		return fmt.Errorf("no -binary given")
	}
	created := time.Unix(o.created, 0).UTC()
	labels := ociimage.Labels{Source: o.source, Revision: o.revision, Version: o.version}
	var specs []ociimage.Spec
	for _, b := range o.binaries {
		plat, path, ok := strings.Cut(b, "=")
		osName, arch, ok2 := strings.Cut(plat, "/")
		if !ok || !ok2 {
			return fmt.Errorf("-binary %q: want OS/ARCH=PATH", b)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("-binary %s: %w", plat, err)
		}
		s, err := ociimage.Program(o.name, arch, data, created, labels).WithCABundle()
		if err != nil {
			return err
		}
		s.OS = osName
		specs = append(specs, s)
	}
	idx, err := ociimage.Index(specs...)
	if err != nil {
		return err
	}
	if err := ociimage.WriteOCILayout(o.out, idx, o.version, created); err != nil {
		return err
	}
	return report(o.out, idx)
}
