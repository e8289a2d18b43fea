// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

var commitTime = time.Date(2026, 8, 20, 12, 30, 5, 0, time.UTC)

func testSpec(arch string, created time.Time) Spec {
	return Program("prog", arch, []byte("\x7fELF not really "+arch), created,
		Labels{Source: "https://github.com/credwatch/credwatch", Revision: "abc123", Version: "v0.0.1"})
}

func indexDigest(t *testing.T, created time.Time) v1.Hash {
	t.Helper()
	idx, err := Index(testSpec("amd64", created), testSpec("arm64", created))
	if err != nil {
		t.Fatal(err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestIndexReproducible(t *testing.T) {
	first, second := indexDigest(t, commitTime), indexDigest(t, commitTime)
	if first != second {
		t.Fatalf("two builds of the same inputs differ: %s vs %s", first, second)
	}
	if other := indexDigest(t, commitTime.Add(time.Second)); other == first {
		t.Fatalf("a different commit time gave the same digest %s", first)
	}
}

func TestImageConfig(t *testing.T) {
	img, err := testSpec("arm64", commitTime).Build()
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct{ what, got, want string }{
		{"user", cf.Config.User, "65532:65532"},
		{"os", cf.OS, "linux"},
		{"architecture", cf.Architecture, "arm64"},
		{"created", cf.Created.UTC().Format(time.RFC3339), "2026-08-20T12:30:05Z"},
		{"entrypoint", strings.Join(cf.Config.Entrypoint, " "), "/usr/local/bin/prog"},
		{LabelCreated, cf.Config.Labels[LabelCreated], "2026-08-20T12:30:05Z"},
		{LabelSource, cf.Config.Labels[LabelSource], "https://github.com/credwatch/credwatch"},
		{LabelRevision, cf.Config.Labels[LabelRevision], "abc123"},
		{LabelVersion, cf.Config.Labels[LabelVersion], "v0.0.1"},
		{LabelTitle, cf.Config.Labels[LabelTitle], "prog"},
		{"history", cf.History[0].Created.UTC().String(), commitTime.String()},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
}

func TestBuildRejects(t *testing.T) {
	for name, s := range map[string]Spec{
		"no arch":       {Entrypoint: []string{"/x"}},
		"no entrypoint": {Architecture: "amd64"},
		"escape":        {Architecture: "amd64", Entrypoint: []string{"/x"}, Files: []File{{Path: "../x"}}},
		"dir as file":   {Architecture: "amd64", Entrypoint: []string{"/x"}, Files: []File{{Path: "/tmp"}}},
		"file as dir":   {Architecture: "amd64", Entrypoint: []string{"/x"}, Files: []File{{Path: "/x"}, {Path: "/x/y"}}},
	} {
		if _, err := s.Build(); err == nil {
			t.Errorf("%s: Build succeeded", name)
		}
	}
}

type entry struct {
	mode     int64
	uid      int
	data     string
	modified time.Time
}

func layerEntries(t *testing.T, img v1.Image) ([]string, map[string]entry) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var order []string
	got := map[string]entry{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		order = append(order, h.Name)
		got[h.Name] = entry{h.Mode, h.Uid, string(data), h.ModTime}
	}
	return order, got
}

func TestLayer(t *testing.T) {
	img, err := testSpec("amd64", commitTime).Build()
	if err != nil {
		t.Fatal(err)
	}
	order, got := layerEntries(t, img)
	want := []string{"dev/", "etc/", "etc/group", "etc/passwd", "home/", "home/nonroot/", "proc/", "root/", "sys/", "tmp/", "usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/prog"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Fatalf("entries\n got %v\nwant %v", order, want)
	}
	for n, e := range got {
		if !e.modified.Equal(commitTime) {
			t.Errorf("%s: mtime %s, want the commit time", n, e.modified)
		}
	}
	if e := got["tmp/"]; e.mode != 0o1777 {
		t.Errorf("tmp mode %o", e.mode)
	}
	if e := got["usr/local/bin/prog"]; e.mode != 0o755 || e.uid != 0 {
		t.Errorf("prog mode %o uid %d", e.mode, e.uid)
	}
	if e := got["home/nonroot/"]; e.uid != NonRootUID {
		t.Errorf("home uid %d", e.uid)
	}
	if !strings.Contains(got["etc/passwd"].data, "nonroot:x:65532:65532:") || !strings.Contains(got["etc/group"].data, "nonroot:x:65532:") {
		t.Errorf("passwd/group lack the non-root user:\n%s%s", got["etc/passwd"].data, got["etc/group"].data)
	}
}

func fileSum(t *testing.T, p string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestWriteOCILayout(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i := range 2 {
		idx, err := Index(testSpec("amd64", commitTime), testSpec("arm64", commitTime))
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, "image"+string(rune('a'+i))+".tar")
		if err := WriteOCILayout(f, idx, "v0.0.1", commitTime); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if fileSum(t, files[0]) != fileSum(t, files[1]) {
		t.Fatal("two OCI layout tarballs of the same index differ")
	}
	lp := untar(t, files[0])
	top, err := layout.ImageIndexFromPath(lp)
	if err != nil {
		t.Fatal(err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Annotations[AnnotationRefName] != "v0.0.1" {
		t.Fatalf("index.json: %+v", m.Manifests)
	}
	idx, err := top.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if d := indexDigest(t, commitTime); m.Manifests[0].Digest != d {
		t.Errorf("layout holds index %s, built %s", m.Manifests[0].Digest, d)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var plats []string
	for _, d := range im.Manifests {
		plats = append(plats, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Config.User != "65532:65532" || cf.Architecture != d.Platform.Architecture || cf.Config.Labels[LabelRevision] != "abc123" {
			t.Errorf("%s: user %q arch %q labels %v", d.Platform, cf.Config.User, cf.Architecture, cf.Config.Labels)
		}
		if _, err := img.Layers(); err != nil {
			t.Error(err)
		}
	}
	if strings.Join(plats, ",") != "linux/amd64,linux/arm64" {
		t.Errorf("platforms %v", plats)
	}
}

// untar extracts the OCI layout tarball f into a new directory and returns it.
func untar(t *testing.T, f string) string {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(out, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWriteDockerArchive(t *testing.T) {
	a, err := testSpec("amd64", commitTime).Build()
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "images.tar")
	if err := WriteDockerArchive(f, map[string]v1.Image{"registry.k8s.io/pause:3.10": a, "local/prog:lab": a}); err != nil {
		t.Fatal(err)
	}
	want, _ := a.ConfigName()
	for _, ref := range []string{"registry.k8s.io/pause:3.10", "local/prog:lab"} {
		tag, _ := name.NewTag(ref)
		img, err := tarball.ImageFromPath(f, &tag)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		if got, _ := img.ConfigName(); got != want {
			t.Errorf("%s: config %s, want %s", ref, got, want)
		}
	}
	if err := WriteDockerArchive(f, map[string]v1.Image{"Not A Tag": a}); err == nil {
		t.Error("a bad tag was accepted")
	}
}

func TestCABundle(t *testing.T) {
	b, n, err := CABundle()
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Errorf("only %d roots", n)
	}
	count := 0
	for rest := b; ; count++ {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			t.Fatal(err)
		}
	}
	if count != n {
		t.Errorf("bundle holds %d certificates, CABundle said %d", count, n)
	}
	again, _, _ := CABundle()
	if !bytes.Equal(b, again) {
		t.Error("CABundle is not stable")
	}
	s, err := testSpec("amd64", commitTime).WithCABundle()
	if err != nil {
		t.Fatal(err)
	}
	img, err := s.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, files := layerEntries(t, img); files[CABundlePath].data != string(b) {
		t.Errorf("the image has no CA bundle at %s", CABundlePath)
	}
}

// The compressed layer must not depend on anything but the content (gzip writes no header time).
func TestLayerGzipHeader(t *testing.T) {
	img, err := testSpec("amd64", commitTime).Build()
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	zr, err := gzip.NewReader(rc)
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("gzip header carries time %s name %q", zr.ModTime, zr.Name)
	}
}
