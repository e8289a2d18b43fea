// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package ociimage

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// ReadOCILayout extracts the OCI image layout tarball file (as WriteOCILayout writes it) into the
// empty directory dir and returns the multi-platform index its index.json names, read from dir:
// dir must stay until the index has been used (pushed).
func ReadOCILayout(file, dir string) (v1.ImageIndex, error) {
	if err := untarLayout(file, dir); err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", file, err)
	}
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", file, err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", file, err)
	}
	if len(m.Manifests) != 1 || !m.Manifests[0].MediaType.IsIndex() {
		return nil, fmt.Errorf("OCI layout %s: index.json has %d entries, want one image index (make image writes one)", file, len(m.Manifests))
	}
	idx, err := top.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", file, err)
	}
	return idx, nil
}

// untarLayout extracts the directories and regular files of the tarball file into dir, refusing
// any other entry and any path that leaves dir.
func untarLayout(file, dir string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("entry %q leaves the layout", h.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := writeFile(p, tr); err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %q is not a file or directory", h.Name)
		}
	}
}

func writeFile(p string, r io.Reader) error {
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
