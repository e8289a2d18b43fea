// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package image builds the images the lab's nodes run — pause, the tenant workload and credwatch
// itself — from this repository's source, with no registry and no container daemon: `go build`
// (static, -trimpath) and pkg/ociimage, into one docker-archive tarball for
// `ctr -n k8s.io images import`. The tarball is named after a hash of the source, so a second
// Build of an unchanged tree returns the cached file at once.
package image

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/credwatch/credwatch/pkg/ociimage"
)

// The tags in the tarball. Pods name the tenant and credwatch images without a registry
// (`image: local/credwatch-tenant:lab`, imagePullPolicy Never), which containerd resolves to
// docker.io/local/...; the pause image carries containerd's sandbox_image tag exactly.
const (
	PauseRef     = "registry.k8s.io/pause:3.10"
	TenantRef    = "local/credwatch-tenant:lab"
	CredwatchRef = "local/credwatch:lab"
	PlatformRef  = "local/credwatch-platform:lab"
	// ProviderRef is the lab infrastructure provider's controller (hack/labimages/provider),
	// which a self-managed cluster runs as a Pod against the lab's cloud API.
	ProviderRef = "local/credwatch-lab-provider:lab"
)

// ModulePath is the module whose source the images are built from.
const ModulePath = "github.com/credwatch/credwatch"

// keep is how many tarballs per architecture Build leaves in the cache directory.
const keep = 3

// Config says where to build from and to.
type Config struct {
	OutDir    string    // cache directory for the tarball; required
	SourceDir string    // root of the credwatch module; default: found upwards from the working directory
	Arch      string    // GOARCH of the nodes; default runtime.GOARCH
	Go        string    // the go command; default "go"
	Stderr    io.Writer // go build's output; default discarded (it is in the error on failure)
}

// BuildLabImages builds (or finds in outDir) the lab image tarball for this machine's architecture
// from the credwatch source tree around the working directory, and returns its path.
func BuildLabImages(ctx context.Context, outDir string) (tarball string, err error) {
	return Build(ctx, Config{OutDir: outDir})
}

// Build returns the path of the tarball holding PauseRef, TenantRef, CredwatchRef, PlatformRef
// and ProviderRef for c.Arch,
// building it unless a tarball of the same source is already in c.OutDir.
func Build(ctx context.Context, c Config) (string, error) {
	if err := c.complete(); err != nil {
		return "", err
	}
	goVersion, err := c.goVersion(ctx)
	if err != nil {
		return "", err
	}
	sum, err := SourceHash(c.SourceDir, c.OutDir)
	if err != nil {
		return "", err
	}
	key := hashStrings(formatVersion, c.Arch, goVersion, sum)
	out := filepath.Join(c.OutDir, fmt.Sprintf("lab-images-%s-%s.tar", c.Arch, key[:16]))
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := c.build(ctx, out, key); err != nil {
		return "", err
	}
	prune(c.OutDir, c.Arch, out)
	return out, nil
}

// formatVersion changes when the image layout changes, so old tarballs are not reused.
const formatVersion = "credwatch-lab-images/3"

func (c *Config) complete() error {
	if c.OutDir == "" {
		return fmt.Errorf("lab images: no output directory")
	}
	if c.Arch == "" {
		c.Arch = runtime.GOARCH
	}
	if c.Go == "" {
		c.Go = "go"
	}
	if c.Stderr == nil {
		c.Stderr = io.Discard
	}
	if c.SourceDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("lab images: %w", err)
		}
		if c.SourceDir, err = FindSource(wd); err != nil {
			return err
		}
	}
	abs, err := filepath.Abs(c.OutDir)
	if err != nil {
		return fmt.Errorf("lab images: %w", err)
	}
	c.OutDir = abs
	return nil
}

func (c *Config) goVersion(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, c.Go, "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("lab images: %s env GOVERSION: %w", c.Go, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// programs are the binaries in the images: the package to build and the image it goes into.
var programs = []struct{ name, pkg, ref string }{
	{"pause", "./hack/labimages/pause", PauseRef},
	{"tenant", "./hack/labimages/tenant", TenantRef},
	{"credwatch", "./cmd/credwatch", CredwatchRef},
	{"platform", "./hack/labimages/platform", PlatformRef},
	{"provider", "./hack/labimages/provider", ProviderRef},
}

// build compiles the programs and writes the tarball at out.
func (c *Config) build(ctx context.Context, out, key string) error {
	if err := os.MkdirAll(c.OutDir, 0o755); err != nil {
		return fmt.Errorf("lab images: %w", err)
	}
	bin, err := os.MkdirTemp(c.OutDir, ".bin-")
	if err != nil {
		return fmt.Errorf("lab images: %w", err)
	}
	defer os.RemoveAll(bin)
	args := []string{"build", "-trimpath", "-ldflags=-s -w", "-o", bin + string(filepath.Separator)}
	for _, p := range programs {
		args = append(args, p.pkg)
	}
	cmd := exec.CommandContext(ctx, c.Go, args...)
	cmd.Dir = c.SourceDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+c.Arch, "GOFLAGS=-buildvcs=false")
	var errOut strings.Builder
	cmd.Stdout, cmd.Stderr = c.Stderr, io.MultiWriter(c.Stderr, &errOut)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("lab images: go build for linux/%s in %s: %w\n%s", c.Arch, c.SourceDir, err, errOut.String())
	}
	labels := ociimage.Labels{Source: "https://" + ModulePath, Revision: "source-" + key[:16], Version: "lab"}
	images := map[string]v1.Image{}
	for _, p := range programs {
		data, err := os.ReadFile(filepath.Join(bin, p.name))
		if err != nil {
			return fmt.Errorf("lab images: %w", err)
		}
		spec := ociimage.Program(p.name, c.Arch, data, time.Unix(0, 0), labels)
		if p.ref == CredwatchRef {
			if spec, err = spec.WithCABundle(); err != nil {
				return fmt.Errorf("lab images: %w", err)
			}
		}
		img, err := spec.Build()
		if err != nil {
			return fmt.Errorf("lab images: %s: %w", p.ref, err)
		}
		images[p.ref] = img
	}
	if err := ociimage.WriteDockerArchive(out, images); err != nil {
		return fmt.Errorf("lab images: %w", err)
	}
	return nil
}

// prune removes all but the newest keep tarballs of arch in dir, never current.
func prune(dir, arch, current string) {
	old, _ := filepath.Glob(filepath.Join(dir, "lab-images-"+arch+"-*.tar"))
	type aged struct {
		path string
		mod  time.Time
	}
	var files []aged
	for _, p := range old {
		if st, err := os.Stat(p); err == nil && p != current {
			files = append(files, aged{p, st.ModTime()})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.After(files[j].mod) })
	for i := keep - 1; i < len(files); i++ {
		_ = os.Remove(files[i].path)
	}
}
