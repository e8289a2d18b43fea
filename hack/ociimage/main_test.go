// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunReproducible is `make image` minus the go build: two runs over the same binaries and
// commit time write the same bytes (pkg/ociimage's tests read such a tarball back as a layout).
func TestRunReproducible(t *testing.T) {
	dir := t.TempDir()
	var bins []string
	for _, arch := range []string{"amd64", "arm64"} {
		p := filepath.Join(dir, "credwatch-"+arch)
		if err := os.WriteFile(p, []byte("static binary for "+arch), 0o755); err != nil {
			t.Fatal(err)
		}
		bins = append(bins, "-binary", "linux/"+arch+"="+p)
	}
	var outs [][]byte
	for _, name := range []string{"a.tar", "b.tar"} {
		out := filepath.Join(dir, name)
		args := append([]string{"-out", out, "-created", "1790000000", "-version", "v0.1.0", "-revision", "0123abcd"}, bins...)
		if err := run(args); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatal("two runs from the same inputs wrote different tarballs")
	}
}

func TestRunRejects(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-binary", "linux/amd64=/x"}, "-created is required"},
		{[]string{"-created", "0"}, "no -binary"},
		{[]string{"-created", "0", "-binary", "amd64"}, "want OS/ARCH=PATH"},
		{[]string{"-created", "0", "-binary", "linux/amd64=/does/not/exist"}, "no such file"},
	}
	for _, tt := range tests {
		err := run(append([]string{"-out", filepath.Join(t.TempDir(), "x.tar")}, tt.args...))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run(%v) = %v, want %q", tt.args, err, tt.want)
		}
	}
}
