// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra/doc"

	cwcli "github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/root"
)

// manDir is where an archive carries the man pages: MANPATH=<archive>/man finds them.
const manDir = "man/man1/"

// manPages are the section-1 man pages of every command (credwatch.1, credwatch-check.1, …),
// generated here with cobra/doc from the same command tree as the binary's. They are made in
// this program, not by a credwatch subcommand, so that go-md2man and its templates stay out of
// the credwatch binary (hack/binsize.sh). The date is the release's source date, not today, so
// that the archives stay reproducible.
func manPages(version string, date time.Time) ([]file, error) {
	dir, err := os.MkdirTemp("", "credwatch-man-")
	if err != nil {
		return nil, fmt.Errorf("man pages: %w", err)
	}
	defer os.RemoveAll(dir)
	cmd := root.NewCommand("credwatch", cwcli.Streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	cmd.DisableAutoGenTag = true
	header := &doc.GenManHeader{Section: "1", Date: &date, Source: "credwatch " + version, Manual: "credwatch manual"}
	if err := doc.GenManTree(cmd, header, dir); err != nil {
		return nil, fmt.Errorf("man pages: %w", err)
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.1"))
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("man pages: none generated (%v)", err)
	}
	sort.Strings(names)
	fs := make([]file, 0, len(names))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("man pages: %w", err)
		}
		fs = append(fs, file{manDir + filepath.Base(n), 0o644, data})
	}
	return fs, nil
}
