// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package images

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/credwatch/credwatch/pkg/lab"
	labimage "github.com/credwatch/credwatch/pkg/lab/image"
	"github.com/credwatch/credwatch/pkg/ociimage"
)

// Config says which images to build, from where and to where.
type Config struct {
	BinDir  string // the lab bin dir; default lab.DefaultBinDir()
	Version string // the Kubernetes version kubeadm deploys ("v1.30.14"); required, one of Versions()
	OutDir  string // cache directory for the tarball; required
	// Arch is the nodes' GOARCH; default runtime.GOARCH. It must be this machine's: the C library
	// comes from this machine.
	Arch string
	// LabImages is the lab images tarball (pkg/lab/image) the pause image is read from; default
	// built (or found) by labimage.Build in OutDir.
	LabImages string
}

// formatVersion changes when the images' layout changes, so old tarballs are not reused.
const formatVersion = "credwatch-kubeadm-images/1"

// Build returns the path of a docker-archive tarball, for `ctr -n k8s.io images import`, holding
// every image of Refs(c.Version) under its tag, building it unless a tarball of the same inputs is
// already in c.OutDir. A missing binary is an error naming the make target that builds it, except
// an optional image's, which is left out.
func Build(ctx context.Context, c Config) (string, error) {
	if err := c.complete(); err != nil {
		return "", err
	}
	refs, err := Refs(c.Version)
	if err != nil {
		return "", err
	}
	if c.LabImages == "" {
		if c.LabImages, err = labimage.Build(ctx, labimage.Config{OutDir: c.OutDir, Arch: c.Arch}); err != nil {
			return "", fmt.Errorf("kubeadm images: the pause image: %w", err)
		}
	}
	return c.tarball(ctx, fmt.Sprintf("kubeadm-images-%s-%s-", c.Version, c.Arch), refs)
}

// BuildPrograms returns the path of a docker-archive tarball holding one image per ref (lab
// binaries other than kubeadm's: the Cluster API managers for a cluster that runs them as pods),
// made as Build makes its images and cached under name in c.OutDir. c.Version is the images'
// version label.
func BuildPrograms(ctx context.Context, c Config, name string, refs []Ref) (string, error) {
	if err := c.complete(); err != nil {
		return "", err
	}
	for _, r := range refs {
		if r.Binary == Pause {
			return "", fmt.Errorf("kubeadm images: %s: BuildPrograms holds lab binaries, not the pause image", r.Tag)
		}
	}
	return c.tarball(ctx, fmt.Sprintf("%s-%s-%s-", name, c.Version, c.Arch), refs)
}

// tarball builds (or finds) the tarball of refs named prefix+hash, and removes older ones of
// the same prefix: each is hundreds of MB.
func (c *Config) tarball(ctx context.Context, prefix string, refs []Ref) (string, error) {
	plan, err := c.plan(refs)
	if err != nil {
		return "", err
	}
	key, err := plan.key(*c)
	if err != nil {
		return "", err
	}
	out := filepath.Join(c.OutDir, prefix+key[:16]+".tar")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := plan.write(ctx, *c, out); err != nil {
		return "", err
	}
	old, _ := filepath.Glob(filepath.Join(c.OutDir, prefix+"*.tar"))
	for _, p := range old {
		if p != out {
			_ = os.Remove(p)
		}
	}
	return out, nil
}

func (c *Config) complete() error {
	if c.OutDir == "" {
		return fmt.Errorf("kubeadm images: no output directory")
	}
	if c.Version == "" {
		return fmt.Errorf("kubeadm images: no Kubernetes version (one of %v)", Versions())
	}
	if c.BinDir == "" {
		c.BinDir = lab.DefaultBinDir()
	}
	if c.Arch == "" {
		c.Arch = runtime.GOARCH
	}
	if c.Arch != runtime.GOARCH {
		return fmt.Errorf("kubeadm images: arch %s: the C library and loader are copied from this %s machine", c.Arch, runtime.GOARCH)
	}
	abs, err := filepath.Abs(c.OutDir)
	if err != nil {
		return fmt.Errorf("kubeadm images: %w", err)
	}
	c.OutDir = abs
	return nil
}

// image is one planned image: its ref, the binary's path and the shared files it needs.
type image struct {
	Ref
	bin    string
	shared []string
}

type plan []image

// plan finds each ref's binary and the files it needs.
func (c *Config) plan(refs []Ref) (plan, error) {
	var p plan
	var missing []string
	for _, r := range refs {
		if r.Binary == Pause {
			p = append(p, image{Ref: r})
			continue
		}
		bin := filepath.Join(c.BinDir, r.Dir, r.Binary)
		if st, err := os.Stat(bin); err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			if !r.Optional {
				missing = append(missing, fmt.Sprintf("%s %s (for %s) not found at %s: run `%s` (or set CREDWATCH_LAB_BIN)", r.Binary, r.Dir, r.Tag, bin, r.Make))
			}
			continue
		}
		if err := checkMachine(bin, c.Arch); err != nil {
			return nil, err
		}
		shared, err := SharedFiles(bin)
		if err != nil {
			return nil, fmt.Errorf("kubeadm images: %s: %w", r.Tag, err)
		}
		p = append(p, image{Ref: r, bin: bin, shared: shared})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("kubeadm images for %s: %s", c.Version, strings.Join(missing, "; "))
	}
	return p, nil
}

// checkMachine fails unless bin is an ELF executable for arch.
func checkMachine(bin, arch string) error {
	f, err := elf.Open(bin)
	if err != nil {
		return fmt.Errorf("kubeadm images: %w", err)
	}
	defer f.Close()
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	if f.Machine != want {
		return fmt.Errorf("kubeadm images: %s is %s, not %s", bin, f.Machine, arch)
	}
	return nil
}

// key hashes what the tarball is made of: the format, the tags, and the path, size and
// modification time of every file copied in (binaries, libraries, the lab images tarball). Stat
// rather than content keeps a cached Build instant; the lab bin dir's files are replaced, never
// edited in place, so a rebuild changes their mtime.
func (p plan) key(c Config) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", formatVersion, c.Arch, c.Version)
	stat := func(file string) error {
		st, err := os.Stat(file)
		if err != nil {
			return fmt.Errorf("kubeadm images: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", file, st.Size(), st.ModTime().UnixNano())
		return nil
	}
	for _, im := range p {
		fmt.Fprintf(h, "%s\x00%s\x00", im.Tag, im.Binary)
		files := append([]string{im.bin}, im.shared...)
		if im.Binary == Pause {
			files = []string{c.LabImages}
		}
		for _, f := range files {
			if err := stat(f); err != nil {
				return "", err
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// write builds the images, as many at once as there are CPUs (gzip is the cost), and writes the
// tarball at out.
func (p plan) write(ctx context.Context, c Config, out string) error {
	var pause v1.Image
	if p.hasPause() {
		var err error
		if pause, err = labPause(c.LabImages); err != nil {
			return err
		}
	}
	imgs := make([]v1.Image, len(p))
	errs := make([]error, len(p))
	slots := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i, im := range p {
		if im.Binary == Pause {
			imgs[i] = pause
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			if errs[i] = ctx.Err(); errs[i] == nil {
				imgs[i], errs[i] = im.build(c)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	tagged := map[string]v1.Image{}
	for i, im := range p {
		tagged[im.Tag] = imgs[i]
	}
	if err := ociimage.WriteDockerArchive(out, tagged); err != nil {
		return fmt.Errorf("kubeadm images: %w", err)
	}
	return nil
}

// build returns im's image: the binary at /usr/local/bin/NAME, its interpreter and libraries at
// their paths, run as root, as kubeadm's static pods expect (the real images' user is root too:
// they read /etc/kubernetes/pki keys of mode 0600 and write /var/lib/etcd).
func (im image) build(c Config) (v1.Image, error) {
	data, err := os.ReadFile(im.bin)
	if err != nil {
		return nil, fmt.Errorf("kubeadm images: %w", err)
	}
	version := c.Version
	if im.Binary == "etcd" {
		version = lab.EtcdVersion
	}
	spec := ociimage.Program(im.Binary, c.Arch, data, time.Unix(0, 0), ociimage.Labels{Version: version})
	for _, f := range im.shared {
		lib, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("kubeadm images: %s: %w", im.Tag, err)
		}
		spec.Files = append(spec.Files, ociimage.File{Path: f, Mode: 0o755, Data: lib})
	}
	img, err := spec.Build()
	if err != nil {
		return nil, fmt.Errorf("kubeadm images: %s: %w", im.Tag, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("kubeadm images: %s: %w", im.Tag, err)
	}
	cfg := cf.Config
	cfg.User = "0:0"
	if img, err = mutate.Config(img, cfg); err != nil {
		return nil, fmt.Errorf("kubeadm images: %s: %w", im.Tag, err)
	}
	return img, nil
}

func (p plan) hasPause() bool {
	for _, im := range p {
		if im.Binary == Pause {
			return true
		}
	}
	return false
}

// labPause reads the pause image from the lab images tarball.
func labPause(file string) (v1.Image, error) {
	tag, err := name.NewTag(labimage.PauseRef)
	if err != nil {
		return nil, fmt.Errorf("kubeadm images: %w", err)
	}
	img, err := tarball.ImageFromPath(file, &tag)
	if err != nil {
		return nil, fmt.Errorf("kubeadm images: the pause image in %s: %w", file, err)
	}
	return img, nil
}
