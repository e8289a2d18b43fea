// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/credwatch/credwatch/pkg/ociimage"
)

func writeChart(t *testing.T, appVersion string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: credwatch\nversion: 0.1.0\nappVersion: \""+appVersion+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReference(t *testing.T) {
	chart := writeChart(t, "0.3.1")
	for _, tt := range []struct {
		registry, version, want, err string
	}{
		{"127.0.0.1:5000", "", "127.0.0.1:5000/credwatch:0.3.1", ""},
		{"ghcr.io/credwatch", "f5e2e62-dirty", "ghcr.io/credwatch/credwatch:0.3.1", ""},
		{"registry.example:5000/team/tools", "v0.3.1", "registry.example:5000/team/tools/credwatch:0.3.1", ""},
		{"127.0.0.1:5000", "0.3.1", "127.0.0.1:5000/credwatch:0.3.1", ""},
		{"127.0.0.1:5000", "v0.3.0-4-gabcdef0", "127.0.0.1:5000/credwatch:0.3.1", ""},
		{"127.0.0.1:5000", "v0.4.0", "", "VERSION v0.4.0 but the chart's appVersion is 0.3.1"},
		{"Bad Host:5000", "", "", "image reference"},
	} {
		o := options{chart: chart, version: tt.version, repo: "credwatch", registry: tt.registry}
		ref, err := o.reference()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %s: err %v, want %q", tt.registry, tt.version, err, tt.err)
			}
			continue
		}
		if err != nil || ref.String() != tt.want {
			t.Errorf("%s %s: %v, %v; want %s", tt.registry, tt.version, ref, err, tt.want)
		}
	}
	if _, err := (options{chart: t.TempDir(), registry: "r:1"}).reference(); err == nil {
		t.Error("no Chart.yaml: no error")
	}
}

// TestRunPushes pushes a two-platform layout to go-containerregistry's in-memory registry on
// loopback and reads it back by the tag: the same index digest.
func TestRunPushes(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	created := time.Unix(1790000000, 0)
	var specs []ociimage.Spec
	for _, arch := range []string{"amd64", "arm64"} {
		specs = append(specs, ociimage.Program("credwatch", arch, []byte("binary for "+arch), created, ociimage.Labels{}))
	}
	idx, err := ociimage.Index(specs...)
	if err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(t.TempDir(), "image.tar")
	if err := ociimage.WriteOCILayout(tarball, idx, "v0.3.1", created); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-image", tarball, "-chart", writeChart(t, "0.3.1"), "-version", "v0.3.1", host + "/team"}, &out); err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Digest()
	if !strings.HasPrefix(out.String(), "pushed "+host+"/team/credwatch:0.3.1@"+want.String()) || !strings.Contains(out.String(), "linux/arm64") {
		t.Errorf("output:\n%s", out.String())
	}
	ref, err := name.ParseReference(host + "/team/credwatch:0.3.1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := got.Digest(); d != want {
		t.Errorf("registry has %s, pushed %s", d, want)
	}
	if err := run(context.Background(), []string{"-image", tarball}, io.Discard); err == nil || !strings.Contains(err.Error(), "want one registry") {
		t.Errorf("no registry: %v", err)
	}
}
