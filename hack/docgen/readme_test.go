// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeInstall: the README stays at most 120 lines, and its Install section starts with the
// path from a clone, through make targets and a package that exist, and offers no `go install
// …@latest`, which needs a published release.
func TestReadmeInstall(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > 120 {
		t.Errorf("README.md has %d lines, want at most 120", n)
	}
	_, install, ok := strings.Cut(string(readme), "\n## Install\n")
	if !ok {
		t.Fatal("README.md has no Install section")
	}
	install, _, _ = strings.Cut(install, "\n## ")
	_, first, _ := strings.Cut(install, "```sh\n")
	first, _, _ = strings.Cut(first, "```")
	for _, tt := range []struct {
		name, text, re string
		want           bool
	}{
		{"the first block clones", first, `(?m)^git clone `, true},
		{"the first block runs make install", first, `(?m)^make install\b`, true},
		{"the first block runs make demo-offline", first, `(?m)^make demo-offline\b`, true},
		{"the first block names go install ./cmd/credwatch", first, `go install \./cmd/credwatch\b`, true},
		{"the section offers go install @latest", install, `go install \S+@latest`, false},
	} {
		if got := regexp.MustCompile(tt.re).MatchString(tt.text); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	for _, target := range []string{"install", "demo-offline"} {
		if !regexp.MustCompile(`(?m)^` + target + `:`).Match(makefile) {
			t.Errorf("the README runs make %s, which the Makefile does not have", target)
		}
	}
	if _, err := os.Stat("../../cmd/credwatch/main.go"); err != nil {
		t.Errorf("the README installs ./cmd/credwatch: %v", err)
	}
}
