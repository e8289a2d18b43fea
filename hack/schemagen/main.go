// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command schemagen writes the JSON Schemas (draft 2020-12) of the documents credwatch prints
// with -o json, one file per kind, from the Go types that encode them: from the repository's
// root, cd hack/schemagen && go run . ../.. (make docs) writes docs/schemas/KIND.json. A test
// keeps the committed schemas current, and validates real documents against them.
//
// It is a Go module of its own so that the schema library stays out of credwatch's go.mod.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/invopop/jsonschema"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: schemagen REPOSITORY-ROOT")
		os.Exit(2)
	}
	// The Go doc comments are read relative to the root (jsonschema.Reflector.AddGoComments).
	if err := os.Chdir(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "schemagen: %v\n", err)
		os.Exit(2)
	}
	if err := generate(schemaDir); err != nil {
		fmt.Fprintf(os.Stderr, "schemagen: %v\n", err)
		os.Exit(1)
	}
}

// schemaDir is where the schemas are committed, from the repository's root.
const schemaDir = "docs/schemas"

// module is credwatch's module path, which prefixes the packages whose comments are read.
const module = "github.com/credwatch/credwatch"

// generate replaces the schemas in dir with the ones the Go types give. It reads the Go doc
// comments below pkg and internal, relative to the working directory: the repository's root.
func generate(dir string) error {
	comments, err := goComments()
	if err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("remove stale schema: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, k := range kinds() {
		b, err := schemaOf(k, comments, false)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, k.name+".json"), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// goComments are the doc comments of the types and fields below pkg and internal.
func goComments() (map[string]string, error) {
	r := &jsonschema.Reflector{}
	for _, dir := range []string{"pkg", "internal"} {
		if err := r.AddGoComments(module, dir); err != nil {
			return nil, fmt.Errorf("read Go comments: %w", err)
		}
	}
	for k, c := range r.CommentMap {
		r.CommentMap[k] = unwrap(c)
	}
	return r.CommentMap, nil
}

// unwrap joins the lines of each paragraph of a comment: its line breaks are the source's.
func unwrap(comment string) string {
	paras := strings.Split(comment, "\n\n")
	for i, p := range paras {
		paras[i] = strings.Join(strings.Fields(p), " ")
	}
	return strings.Join(paras, "\n\n")
}
