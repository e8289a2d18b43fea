// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command credwatch finds, explains and watches the credential failures that take Kubernetes
// control planes down: service-account tokens one API server mints and another rejects, expired or
// invalidated tokens, and rotated cloud-provider credentials. Run `credwatch --help`.
package main

import (
	"os"

	"github.com/credwatch/credwatch/internal/app"
)

func main() {
	os.Exit(app.Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
