// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRootUID is the user (and group) images run as: distroless's "nonroot".
const NonRootUID = 65532

// File is one file of the image's filesystem.
type File struct {
	Path string // absolute or relative to /; "usr/local/bin/credwatch"
	Mode int64  // permission bits; 0 means 0644
	Data []byte
	UID  int // owner; 0 (root) unless stated
}

// baseFiles are the files every image gets: the users and groups a static non-root program needs.
func baseFiles() []File {
	return []File{
		{Path: "etc/passwd", Data: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
			"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
			fmt.Sprintf("nonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRootUID, NonRootUID))},
		{Path: "etc/group", Data: []byte("root:x:0:\nnobody:x:65534:\n" + fmt.Sprintf("nonroot:x:%d:\n", NonRootUID))},
	}
}

// dir is a directory entry with its mode and owner.
type dir struct {
	mode int64
	uid  int
}

// baseDirs are the empty directories every image gets.
func baseDirs() map[string]dir {
	return map[string]dir{
		"dev": {0o755, 0}, "proc": {0o555, 0}, "sys": {0o555, 0}, "tmp": {0o1777, 0},
		"etc": {0o755, 0}, "root": {0o700, 0}, "home": {0o755, 0}, "home/nonroot": {0o700, NonRootUID},
	}
}

// layerTar returns the uncompressed tar of the base files and dirs plus files, every entry stamped
// with mtime, sorted by path, each parent directory before its children.
func layerTar(files []File, mtime time.Time) ([]byte, error) {
	dirs := baseDirs()
	byPath := map[string]File{}
	for _, f := range append(baseFiles(), files...) {
		p, err := cleanPath(f.Path)
		if err != nil {
			return nil, err
		}
		if _, ok := dirs[p]; ok {
			return nil, fmt.Errorf("image file %s: is a directory", f.Path)
		}
		f.Path = p
		byPath[p] = f // a given file replaces a base file of the same path
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, ok := dirs[d]; !ok {
				dirs[d] = dir{mode: 0o755}
			}
		}
	}
	for p := range byPath {
		if _, ok := dirs[p]; ok {
			return nil, fmt.Errorf("image file %s: also a directory", p)
		}
	}
	names := make([]string, 0, len(dirs)+len(byPath))
	for d := range dirs {
		names = append(names, d)
	}
	for p := range byPath {
		names = append(names, p)
	}
	sort.Strings(names) // "a" < "a/b": a parent sorts before its children
	mtime = mtime.UTC().Truncate(time.Second)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		hdr := &tar.Header{Name: n, ModTime: mtime, Format: tar.FormatPAX}
		if d, ok := dirs[n]; ok {
			hdr.Typeflag, hdr.Name, hdr.Mode, hdr.Uid, hdr.Gid = tar.TypeDir, n+"/", d.mode, d.uid, d.uid
		} else {
			f := byPath[n]
			mode := f.Mode
			if mode == 0 {
				mode = 0o644
			}
			hdr.Typeflag, hdr.Mode, hdr.Size, hdr.Uid, hdr.Gid = tar.TypeReg, mode, int64(len(f.Data)), f.UID, f.UID
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("image layer: %s: %w", n, err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write(byPath[n].Data); err != nil {
				return nil, fmt.Errorf("image layer: %s: %w", n, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("image layer: %w", err)
	}
	return buf.Bytes(), nil
}

// cleanPath makes p relative to / and rejects paths that leave the root.
func cleanPath(p string) (string, error) {
	c := path.Clean("/" + p)
	if c == "/" || strings.Contains(p, "..") {
		return "", fmt.Errorf("image file %q: not a file path inside the image", p)
	}
	return strings.TrimPrefix(c, "/"), nil
}

// newLayer builds the image's one layer, gzip-compressed as an OCI layer. It compresses once, here:
// given the uncompressed tar, go-containerregistry compresses it twice (for the digest, then to
// write it), which for a 100 MB binary at BestCompression costs tens of seconds.
func newLayer(files []File, mtime time.Time) (v1.Layer, error) {
	data, err := layerTar(files, mtime)
	if err != nil {
		return nil, err
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("image layer: %w", err)
	}
	if _, err := zw.Write(data); err != nil {
		return nil, fmt.Errorf("image layer: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("image layer: %w", err)
	}
	compressed := gz.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(compressed)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("image layer: %w", err)
	}
	return l, nil
}
