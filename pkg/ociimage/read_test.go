// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package ociimage

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadOCILayout reads back what WriteOCILayout wrote: the same index digest, both platforms.
func TestReadOCILayout(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "image.tar")
	built, err := Index(testSpec("amd64", commitTime), testSpec("arm64", commitTime))
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteOCILayout(f, built, "v0.0.1", commitTime); err != nil {
		t.Fatal(err)
	}
	idx, err := ReadOCILayout(f, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	got, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if want := indexDigest(t, commitTime); got != want {
		t.Errorf("read index %s, wrote %s", got, want)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 2 {
		t.Errorf("%d manifests, want 2", len(m.Manifests))
	}
}

func TestReadOCILayoutRejects(t *testing.T) {
	for _, tt := range []struct {
		entry tar.Header
		want  string
	}{
		{tar.Header{Name: "../escape", Typeflag: tar.TypeReg}, "leaves the layout"},
		{tar.Header{Name: "/etc/passwd", Typeflag: tar.TypeReg}, "leaves the layout"},
		{tar.Header{Name: "blobs", Typeflag: tar.TypeSymlink, Linkname: "/"}, "not a file or directory"},
		{tar.Header{Name: "oci-layout", Typeflag: tar.TypeReg}, "index.json"},
	} {
		f := filepath.Join(t.TempDir(), "bad.tar")
		out, err := os.Create(f)
		if err != nil {
			t.Fatal(err)
		}
		tw := tar.NewWriter(out)
		if err := tw.WriteHeader(&tt.entry); err != nil {
			t.Fatal(err)
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		out.Close()
		if _, err := ReadOCILayout(f, t.TempDir()); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.entry.Name, err, tt.want)
		}
	}
}
