// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"fmt"
	"io"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// report prints the index digest, the tarball size and each platform's image digest and size.
func report(out string, idx v1.ImageIndex) error {
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	st, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Printf("%s: index %s, %.1f MB\n", out, d, float64(st.Size())/1e6)
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, desc := range m.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return err
		}
		layers, err := img.Layers()
		if err != nil {
			return err
		}
		var compressed, uncompressed int64
		for _, l := range layers {
			n, err := l.Size()
			if err != nil {
				return err
			}
			compressed += n
			u, err := uncompressedSize(l)
			if err != nil {
				return err
			}
			uncompressed += u
		}
		fmt.Printf("  %s %s: %.1f MB compressed, %.1f MB unpacked\n", desc.Platform, desc.Digest, float64(compressed)/1e6, float64(uncompressed)/1e6)
	}
	return nil
}

func uncompressedSize(l v1.Layer) (int64, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	return io.Copy(io.Discard, rc)
}
