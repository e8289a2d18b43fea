// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package images

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab"
)

func TestSharedFiles(t *testing.T) {
	apiserver := filepath.Join(lab.DefaultBinDir(), "v1.30.14", "kube-apiserver")
	for _, bin := range []string{"/bin/ls", apiserver} {
		t.Run(filepath.Base(bin), func(t *testing.T) {
			f, err := elf.Open(bin)
			if err != nil {
				t.Skipf("no ELF binary %s: %v", bin, err)
			}
			interp, err := interpreter(f)
			f.Close()
			if err != nil || interp == "" {
				t.Skipf("%s is not dynamic: %q %v", bin, interp, err)
			}
			got, err := SharedFiles(bin)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(got, interp) {
				t.Errorf("%v lacks the interpreter %s", got, interp)
			}
			if !slices.ContainsFunc(got, func(p string) bool { return filepath.Base(p) == "libc.so.6" }) {
				t.Errorf("%v lacks libc.so.6", got)
			}
			if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
				t.Errorf("%v is not sorted and unique", got)
			}
			for _, p := range got {
				if !filepath.IsAbs(p) {
					t.Errorf("%s is not absolute", p)
				}
				if _, err := os.Stat(p); err != nil {
					t.Error(err)
				}
				if p != interp && filepath.Base(p) == filepath.Base(interp) {
					t.Errorf("the interpreter is copied twice: %s and %s", interp, p)
				}
			}
		})
	}
}

// TestSharedFilesStatic checks a static binary (a CGO_ENABLED=0 Go program built here, offline)
// needs nothing.
func TestSharedFilesStatic(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	for name, data := range map[string]string{"go.mod": "module static\n\ngo 1.22\n", "main.go": "package main\n\nfunc main() {}\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "static")
	cmd := exec.Command(goBin, "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	got, err := SharedFiles(bin)
	if err != nil || len(got) != 0 {
		t.Errorf("SharedFiles of a static binary: %v, %v; want nothing", got, err)
	}
}

func TestSharedFilesErrors(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "script")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, bin, want string }{
		{"not ELF", notELF, "shared libraries of " + notELF},
		{"missing", filepath.Join(dir, "none"), "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := SharedFiles(tt.bin); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("SharedFiles: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestFindLibraryMissing(t *testing.T) {
	_, _, err := findLibrary("libcredwatch-none.so.1", elf.ELFCLASS64, elf.EM_X86_64)
	if err == nil || !strings.Contains(err.Error(), "libcredwatch-none.so.1") {
		t.Errorf("findLibrary: %v, want an error naming the library", err)
	}
}
