// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command imagepush pushes the credwatch image that `make image` wrote — an OCI layout tarball
// holding one multi-platform index — to a registry with go-containerregistry, tagged with the Helm
// chart's appVersion, the tag the chart's image defaults to. `make image-push REGISTRY=host:port[/path]`
// runs it:
//
//	go run ./hack/imagepush -image bin/credwatch-image.tar -chart deploy/helm/credwatch \
//	  -version $(VERSION) host:port/path
//
// pushes host:port/path/credwatch:APPVERSION and prints the reference with the index digest. A
// release -version (vX.Y.Z) must be the chart's appVersion: otherwise the chart would name a tag
// that was never pushed. Credentials come from the Docker config ($DOCKER_CONFIG or
// ~/.docker/config.json, as `docker login` writes it). Registries on loopback or private addresses
// may answer plain http (go-containerregistry's rule); -insecure allows it for any host.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/pkg/ociimage"
)

type options struct {
	image, chart, version, repo string
	insecure                    bool
	registry                    string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "imagepush:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	var o options
	fs := flag.NewFlagSet("imagepush", flag.ContinueOnError)
	fs.StringVar(&o.image, "image", "bin/credwatch-image.tar", "OCI layout tarball to push (make image)")
	fs.StringVar(&o.chart, "chart", "deploy/helm/credwatch", "Helm chart whose appVersion is the tag")
	fs.StringVar(&o.version, "version", "", "the build's VERSION: a release version must equal the chart's appVersion")
	fs.StringVar(&o.repo, "name", "credwatch", "repository name under the registry")
	fs.BoolVar(&o.insecure, "insecure", false, "allow plain http to any registry host")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: imagepush [flags] host:port[/path]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		return fmt.Errorf("want one registry, host:port[/path] (make image-push REGISTRY=...)")
	}
	o.registry = strings.TrimSuffix(fs.Arg(0), "/")
	ref, err := o.reference()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "imagepush-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	idx, err := ociimage.ReadOCILayout(o.image, dir)
	if err != nil {
		return err
	}
	if err := remote.WriteIndex(ref, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pushed %s@%s\n", ref, d)
	for _, desc := range m.Manifests {
		fmt.Fprintf(stdout, "  %s %s\n", desc.Platform, desc.Digest)
	}
	return nil
}

// reference is REGISTRY/NAME:APPVERSION, after checking a release version against the chart.
func (o options) reference() (name.Tag, error) {
	app, err := appVersion(filepath.Join(o.chart, "Chart.yaml"))
	if err != nil {
		return name.Tag{}, err
	}
	if err := checkVersion(o.version, app); err != nil {
		return name.Tag{}, err
	}
	var opts []name.Option
	if o.insecure {
		opts = append(opts, name.Insecure)
	}
	s := o.registry + "/" + o.repo + ":" + app
	tag, err := name.NewTag(s, append(opts, name.StrictValidation)...)
	if err != nil {
		return name.Tag{}, fmt.Errorf("image reference %s: %w", s, err)
	}
	return tag, nil
}

// appVersion reads the chart's appVersion.
func appVersion(chartYAML string) (string, error) {
	data, err := os.ReadFile(chartYAML)
	if err != nil {
		return "", err
	}
	var c struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		return "", fmt.Errorf("%s: %w", chartYAML, err)
	}
	if c.AppVersion == "" {
		return "", fmt.Errorf("%s has no appVersion: it is the image tag", chartYAML)
	}
	return c.AppVersion, nil
}

var releaseRE = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+$`)

// checkVersion refuses a release version other than the chart's appVersion (a leading v aside);
// a development VERSION (a commit, git describe's vX.Y.Z-N-gHASH) pushes under appVersion.
func checkVersion(version, app string) error {
	if !releaseRE.MatchString(version) || strings.TrimPrefix(version, "v") == strings.TrimPrefix(app, "v") {
		return nil
	}
	return fmt.Errorf("VERSION %s but the chart's appVersion is %s: the chart would pull a tag that was never pushed (set appVersion in Chart.yaml)", version, app)
}
