// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package ociimage builds OCI images from static Go binaries with go-containerregistry, without a
// container daemon or a registry.
//
// An image is one layer on top of nothing ("from scratch"): the files given (the binary, a CA bundle)
// plus what a non-root static program needs — /etc/passwd and /etc/group naming the user 65532
// ("nonroot", as distroless does), an empty /tmp (mode 1777), empty /proc, /sys and /dev mount points
// and the user's home. The config runs as 65532:65532 and carries the OCI labels.
//
// Builds are reproducible: every tar entry has the same modification time (Spec.Created — the commit
// time, never "now"), owner 0:0 unless stated, entries are sorted, gzip is the standard library's
// at a fixed level with no header time, and the config's Created and history times are Spec.Created.
// The same inputs and toolchain therefore give the same digests.
//
// Two outputs: WriteDockerArchive writes a `docker save` tarball with several tags for
// `ctr images import`; WriteOCILayout writes an OCI image layout tarball holding one multi-platform
// index.
package ociimage
