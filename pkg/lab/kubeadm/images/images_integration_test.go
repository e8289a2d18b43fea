// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package images

import (
	"archive/tar"
	"context"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	labimage "github.com/credwatch/credwatch/pkg/lab/image"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// TestIntegrationImagesRun builds the v1.30.14 images from the lab's binaries and runs each
// binary's --version chrooted into its image's unpacked filesystem: proof that the loader and the
// C library in the image are the ones the binary needs. It measures the cold and the cached build.
func TestIntegrationImagesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: builds ~300 MB of images")
	}
	labtest.CAPIAll(t)
	binDir := needV130Binaries(t)
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := Config{BinDir: binDir, Version: "v1.30.14", OutDir: t.TempDir()}
	t0 := time.Now()
	labImages, err := labimage.Build(ctx, labimage.Config{OutDir: c.OutDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("lab images (pause) built in %s", time.Since(t0).Round(time.Millisecond))
	c.LabImages = labImages
	t0 = time.Now()
	out, err := Build(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	cold := time.Since(t0)
	t0 = time.Now()
	if again, err := Build(ctx, c); err != nil || again != out {
		t.Fatalf("cached Build: %s, %v; want %s", again, err, out)
	}
	cached := time.Since(t0)
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tarball %s: %.1f MB; cold build %s, cached %s", filepath.Base(out), float64(st.Size())/1e6, cold.Round(time.Millisecond), cached.Round(time.Millisecond))

	tests := []struct{ tag, bin, want string }{
		{"registry.k8s.io/kube-apiserver:v1.30.14", "kube-apiserver", "Kubernetes v1.30.14"},
		{"registry.k8s.io/kube-controller-manager:v1.30.14", "kube-controller-manager", "Kubernetes v1.30.14"},
		{"registry.k8s.io/kube-scheduler:v1.30.14", "kube-scheduler", "Kubernetes v1.30.14"},
		{"registry.k8s.io/etcd:3.5.15-0", "etcd", "etcd Version: " + strings.TrimPrefix(lab.EtcdVersion, "v")},
	}
	for _, tt := range tests {
		t.Run(tt.bin, func(t *testing.T) {
			root := t.TempDir()
			size := unpack(t, out, tt.tag, root)
			cmd := exec.CommandContext(ctx, "/usr/local/bin/"+tt.bin, "--version")
			cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
			cmd.Dir = "/"
			cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
			got, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(got), tt.want) {
				t.Fatalf("chroot %s /usr/local/bin/%s --version: %v\n%s\nwant %q", root, tt.bin, err, got, tt.want)
			}
			t.Logf("%s: %.1f MB compressed, %.1f MB unpacked; %s", tt.tag, float64(size.compressed)/1e6, float64(size.unpacked)/1e6, strings.TrimSpace(strings.SplitN(string(got), "\n", 2)[0]))
		})
	}
}

type imageSize struct{ compressed, unpacked int64 }

// unpack writes the directories and regular files of image tag in the tarball file under root.
func unpack(t *testing.T, file, tag, root string) imageSize {
	t.Helper()
	img := tarImage(t, file, tag)
	var size imageSize
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			t.Fatal(err)
		}
		size.compressed += n
	}
	walkFiles(t, img, func(h *tar.Header, r io.Reader) {
		p := filepath.Join(root, filepath.FromSlash(path.Clean("/"+h.Name)))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if h.Typeflag != tar.TypeReg {
			return
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, os.FileMode(h.Mode)&0o777)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		size.unpacked += n
	})
	return size
}

// needV130Binaries returns the lab bin dir, or skips the test when it lacks the v1.30.14 control
// plane: the controller manager and scheduler come from `make capi-binaries`, which
// `make test-capi` runs (not `make test`: 11 min cold).
func needV130Binaries(t *testing.T) string {
	t.Helper()
	binDir := lab.DefaultBinDir()
	for _, bin := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		if _, err := os.Stat(filepath.Join(binDir, "v1.30.14", bin)); err != nil {
			t.Skipf("no v1.30.14 %s in %s (make test-capi builds it): %v", bin, binDir, err)
		}
	}
	return binDir
}
