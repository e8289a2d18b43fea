// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package ociimage

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// AnnotationRefName is the OCI layout annotation naming an index.json entry.
const AnnotationRefName = "org.opencontainers.image.ref.name"

// WriteDockerArchive writes images as one `docker save` tarball at file, each under its tags
// ("registry.k8s.io/pause:3.10", "local/credwatch-tenant:lab"), for `ctr images import`. The file is
// written to a temporary name first and renamed, so a reader never sees half an archive.
func WriteDockerArchive(file string, tagged map[string]v1.Image) error {
	refs := make(map[name.Reference]v1.Image, len(tagged))
	for tag, img := range tagged {
		t, err := name.NewTag(tag)
		if err != nil {
			return fmt.Errorf("image tag %q: %w", tag, err)
		}
		refs[t] = img
	}
	return writeAtomically(file, func(w io.Writer) error { return tarball.MultiRefWrite(refs, w) })
}

// WriteOCILayout writes idx as an OCI image layout tarball at file: oci-layout, an index.json with
// one entry (the multi-platform index, annotated with refName when given) and the blobs. Entries are
// sorted and stamped with mtime, so the same index gives the same bytes.
func WriteOCILayout(file string, idx v1.ImageIndex, refName string, mtime time.Time) error {
	dir, err := os.MkdirTemp("", "ociimage-layout-")
	if err != nil {
		return fmt.Errorf("OCI layout: %w", err)
	}
	defer os.RemoveAll(dir)
	desc := v1.Descriptor{}
	if refName != "" {
		desc.Annotations = map[string]string{AnnotationRefName: refName}
	}
	top := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: idx, Descriptor: desc})
	if _, err := layout.Write(dir, top); err != nil {
		return fmt.Errorf("OCI layout: %w", err)
	}
	return writeAtomically(file, func(w io.Writer) error { return tarDir(w, dir, mtime) })
}

// tarDir writes the regular files and directories under root to w, sorted, owned by 0:0, with
// modes 0755/0644 and the one mtime.
func tarDir(w io.Writer, root string, mtime time.Time) error {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return fmt.Errorf("OCI layout: %s is not a regular file", p)
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	mtime = mtime.UTC().Truncate(time.Second)
	tw := tar.NewWriter(w)
	for _, p := range paths {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("OCI layout: %w", err)
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime, Mode: 0o644, Typeflag: tar.TypeReg, Size: st.Size(), Format: tar.FormatPAX}
		if st.IsDir() {
			hdr.Name, hdr.Mode, hdr.Typeflag, hdr.Size = hdr.Name+"/", 0o755, tar.TypeDir, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("OCI layout: %s: %w", rel, err)
		}
		if !st.IsDir() {
			if err := copyFile(tw, p); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

func copyFile(w io.Writer, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("OCI layout: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("OCI layout: %s: %w", p, err)
	}
	return nil
}

// writeAtomically writes file through a temporary file in the same directory and renames it.
func writeAtomically(file string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}
