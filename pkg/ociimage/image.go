// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package ociimage

import (
	"fmt"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The OCI label keys Spec.Labels fills in (https://github.com/opencontainers/image-spec/blob/main/annotations.md).
const (
	LabelCreated  = "org.opencontainers.image.created"
	LabelSource   = "org.opencontainers.image.source"
	LabelRevision = "org.opencontainers.image.revision"
	LabelVersion  = "org.opencontainers.image.version"
	LabelTitle    = "org.opencontainers.image.title"
)

// Spec describes one single-platform image.
type Spec struct {
	OS           string // default "linux"
	Architecture string // GOARCH: "amd64", "arm64"; required
	Files        []File // the program and anything beside the base files
	Entrypoint   []string
	Cmd          []string
	Env          []string // default PATH=/usr/local/bin:/usr/bin:/bin
	// Created is the image's creation time and every file's mtime: the commit time (or
	// SOURCE_DATE_EPOCH), never the build time, so two builds of one commit are identical.
	Created time.Time
	Labels  Labels
}

// Labels are the OCI labels of an image.
type Labels struct {
	Title    string // org.opencontainers.image.title
	Source   string // org.opencontainers.image.source: the repository URL
	Revision string // org.opencontainers.image.revision: the commit
	Version  string // org.opencontainers.image.version
	Extra    map[string]string
}

func (l Labels) toMap(created time.Time) map[string]string {
	m := map[string]string{LabelCreated: created.UTC().Format(time.RFC3339)}
	for k, v := range map[string]string{LabelTitle: l.Title, LabelSource: l.Source, LabelRevision: l.Revision, LabelVersion: l.Version} {
		if v != "" {
			m[k] = v
		}
	}
	for k, v := range l.Extra {
		m[k] = v
	}
	return m
}

// Platform is the platform of s.
func (s Spec) Platform() v1.Platform {
	os := s.OS
	if os == "" {
		os = "linux"
	}
	return v1.Platform{OS: os, Architecture: s.Architecture}
}

// Build returns the image s describes: one layer, OCI media types, running as 65532:65532.
func (s Spec) Build() (v1.Image, error) {
	if s.Architecture == "" {
		return nil, fmt.Errorf("image spec: no architecture")
	}
	if len(s.Entrypoint) == 0 && len(s.Cmd) == 0 {
		return nil, fmt.Errorf("image spec for %s: no entrypoint", s.Architecture)
	}
	created := s.Created.UTC().Truncate(time.Second)
	env := s.Env
	if env == nil {
		env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	}
	p := s.Platform()
	user := strconv.Itoa(NonRootUID) + ":" + strconv.Itoa(NonRootUID)
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.ConfigFile(base, &v1.ConfigFile{
		Architecture: p.Architecture, OS: p.OS, Created: v1.Time{Time: created},
		Config: v1.Config{User: user, Entrypoint: s.Entrypoint, Cmd: s.Cmd, Env: env, Labels: s.Labels.toMap(created)},
		RootFS: v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, fmt.Errorf("image config for %s: %w", p.Architecture, err)
	}
	layer, err := newLayer(s.Files, created)
	if err != nil {
		return nil, err
	}
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
		History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "credwatch ociimage", Comment: "static binary, non-root"}})
	if err != nil {
		return nil, fmt.Errorf("image for %s: %w", p.Architecture, err)
	}
	return img, nil
}

// Index builds each spec and returns a multi-platform OCI image index of them, in the order given.
func Index(specs ...Spec) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	adds := make([]mutate.IndexAddendum, 0, len(specs))
	seen := map[string]bool{}
	for _, s := range specs {
		p := s.Platform()
		if seen[p.String()] {
			return nil, fmt.Errorf("image index: platform %s given twice", p)
		}
		seen[p.String()] = true
		img, err := s.Build()
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return mutate.AppendManifests(idx, adds...), nil
}

// Program returns the spec of an image that runs one static binary, installed as
// /usr/local/bin/NAME (mode 0755) and used as the entrypoint.
func Program(name, arch string, binary []byte, created time.Time, labels Labels) Spec {
	p := "/usr/local/bin/" + name
	if labels.Title == "" {
		labels.Title = name
	}
	return Spec{Architecture: arch, Files: []File{{Path: p, Mode: 0o755, Data: binary}}, Entrypoint: []string{p}, Created: created, Labels: labels}
}

// WithCABundle returns s with the Mozilla root certificates at /etc/ssl/certs/ca-certificates.crt
// (see CABundle).
func (s Spec) WithCABundle() (Spec, error) {
	ca, _, err := CABundle()
	if err != nil {
		return s, err
	}
	s.Files = append(append([]File(nil), s.Files...), File{Path: CABundlePath, Data: ca})
	return s, nil
}
