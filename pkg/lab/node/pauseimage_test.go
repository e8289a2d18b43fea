// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node_test

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// pauseSource is the test's one program: it prints that it started and the size (never the
// content) of each file named on its command line, then sleeps until SIGTERM or SIGINT. It is the
// sandbox image and the test pod's container.
const pauseSource = `package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	fmt.Println("pause: started")
	for _, f := range os.Args[1:] {
		if b, err := os.ReadFile(f); err != nil {
			fmt.Println("pause:", err)
		} else {
			fmt.Printf("pause: %s holds %d bytes\n", f, len(b))
		}
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
`

// Image references the test image carries: the sandbox image containerd is configured with and
// the name a pod uses (a bare "local/pause:1" resolves to docker.io/local/pause:1).
const (
	testPodImage = "local/pause:1"
)

// buildPauseImage compiles pauseSource statically and writes a docker-save tarball holding it as
// /pause, tagged as the sandbox image and as testPodImage.
func buildPauseImage(t *testing.T, sandboxImage string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(pauseSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module pause\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "pause")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build pause: %v\n%s", err, out)
	}
	prog, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	layerTar := rootfsTar(t, prog)
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layerTar)), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Entrypoint = []string{"/pause"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	refs := map[name.Reference]v1.Image{}
	for _, r := range []string{sandboxImage, testPodImage} {
		ref, err := name.ParseReference(r)
		if err != nil {
			t.Fatal(err)
		}
		refs[ref] = img
	}
	out := filepath.Join(dir, "pause.tar")
	if err := tarball.MultiRefWriteToFile(out, refs); err != nil {
		t.Fatalf("write image: %v", err)
	}
	return out
}

// rootfsTar is a root file system: /pause, /etc/passwd and /etc/group, empty /tmp /proc /sys /dev.
func rootfsTar(t *testing.T, prog []byte) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range []string{"dev/", "etc/", "proc/", "sys/", "tmp/"} {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode}); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{
		{"etc/passwd", 0o644, []byte("root:x:0:0:root:/:/pause\nnobody:x:65534:65534:nobody:/:/pause\n")},
		{"etc/group", 0o644, []byte("root:x:0:\nnobody:x:65534:\n")},
		{"pause", 0o755, prog},
	} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
