// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command docgen writes the command reference (one Markdown page per command) from credwatch's
// cobra tree: go run ./hack/docgen docs/reference. A test keeps the committed pages current.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra/doc"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/root"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: docgen DIR")
		os.Exit(2)
	}
	if err := generate(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "docgen: %v\n", err)
		os.Exit(1)
	}
}

// generate replaces the Markdown pages in dir with ones generated from the command tree.
func generate(dir string) error {
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("remove stale page: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reference directory: %w", err)
	}
	cmd := root.NewCommand("credwatch", cli.Streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	cmd.InitDefaultCompletionCmd() // cobra adds it on Execute; the reference shows it too
	cmd.DisableAutoGenTag = true   // no date: the pages must not change unless the commands do
	if err := doc.GenMarkdownTree(cmd, dir); err != nil {
		return fmt.Errorf("generate reference: %w", err)
	}
	return nil
}
