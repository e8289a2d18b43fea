// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package image

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FindSource returns the root of the credwatch module: dir or its nearest parent whose go.mod
// declares ModulePath.
func FindSource(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if modulePathOf(filepath.Join(d, "go.mod")) == ModulePath {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("lab images are built from the credwatch source: no go.mod of %s in %s or above it (run from the repository)", ModulePath, dir)
		}
	}
}

func modulePathOf(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// skipDir says whether a directory is never part of what the images are built from: hidden ones
// (.git, .lab-cache), build output and test data.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || name == "bin" || name == "testdata" || name == "node_modules"
}

// SourceHash hashes what a build of the module at root can depend on: every file except tests,
// hidden directories (.git, .lab-cache), bin, testdata, and nested modules (hack/labbin). Dependencies are covered by
// go.sum. exclude (the cache directory, if inside root) is skipped too.
func SourceHash(root, exclude string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (skipDir(d.Name()) || p == exclude || exists(filepath.Join(p, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(d.Name(), "_test.go") {
			return nil
		}
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		return hashFile(h, p)
	})
	if err != nil {
		return "", fmt.Errorf("lab images: hashing the source in %s: %w", root, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(w io.Writer, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.Copy(w, f)
	fmt.Fprintf(w, "\x00%d\x00", n)
	return err
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func hashStrings(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%s\x00", p)
	}
	return hex.EncodeToString(h.Sum(nil))
}
