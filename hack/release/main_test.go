// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestCheckVersion(t *testing.T) {
	for _, c := range []struct {
		version, app, err string
	}{
		{"v0.1.0", "0.1.0", ""},
		{"v0.1.0", "v0.1.0", ""},
		{"v10.20.30", "10.20.30", ""},
		{"", "0.1.0", "-version is required"},
		{"0.1.0", "0.1.0", `-version "0.1.0" is not a release tag vX.Y.Z`},
		{"v0.1", "0.1.0", "not a release tag"},
		{"v0.1.0-rc.1", "0.1.0", "not a release tag"},
		{"v01.1.0", "1.1.0", "not a release tag"},
		{"v0.2.0", "0.1.0", `-version v0.2.0 differs from appVersion "0.1.0" in deploy/helm/credwatch/Chart.yaml`},
	} {
		err := checkVersion(c.version, c.app)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("checkVersion(%q, %q): %v", c.version, c.app, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("checkVersion(%q, %q) = %v, want an error with %q", c.version, c.app, err, c.err)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("checkVersion(%q, %q): %q is not one line", c.version, c.app, err)
		}
	}
}

func TestAppVersion(t *testing.T) {
	got, err := appVersion("../../" + chart)
	if err != nil {
		t.Fatal(err)
	}
	if checkVersion("v"+got, got) != nil {
		t.Errorf("the chart's appVersion %q is not X.Y.Z", got)
	}
	p := filepath.Join(t.TempDir(), "Chart.yaml")
	if err := os.WriteFile(p, []byte("name: x\nappVersion: '1.2.3' # the image tag\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := appVersion(p); err != nil || got != "1.2.3" {
		t.Errorf("appVersion = %q, %v; want 1.2.3", got, err)
	}
}

func TestRunRefusesBadFlags(t *testing.T) {
	t.Chdir("../..")
	for _, args := range [][]string{{"-version", "v9.9.9"}, {"-version", "latest"}, {"-platforms", "linux/386"}} {
		var stderr bytes.Buffer
		err := run(args, io.Discard, &stderr)
		if _, ok := err.(usageError); !ok {
			t.Errorf("run(%q) = %v, want a usage error (exit 2)", args, err)
		}
	}
}

func TestParsePlatforms(t *testing.T) {
	ps, err := parsePlatforms(defaultPlatforms)
	if err != nil || len(ps) != 6 {
		t.Fatalf("parsePlatforms(default) = %v, %v", ps, err)
	}
	for _, bad := range []string{"linux/386", "linux", "linux/amd64,linux/amd64", ""} {
		if _, err := parsePlatforms(bad); err == nil {
			t.Errorf("parsePlatforms(%q) accepted", bad)
		}
	}
}

// fakeRelease builds a few bytes per platform instead of credwatch.
func fakeRelease(t *testing.T, out string) release {
	root := t.TempDir()
	for _, n := range []string{"README.md", "LICENSE"} {
		if err := os.WriteFile(filepath.Join(root, n), []byte(n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return release{
		version: "v1.2.3", commit: "abc", mtime: time.Unix(1700000000, 0).UTC(), root: root, out: out,
		log: io.Discard,
		build: func(goos, goarch, out string) error {
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			return os.WriteFile(out, []byte("binary "+goos+"/"+goarch), 0o755)
		},
		complete: func(bin, shell string) ([]byte, error) { return []byte("# " + shell + "\n"), nil },
	}
}

// TestArchivesDeterministic: two builds give the same bytes, whatever the file times on disk.
func TestArchivesDeterministic(t *testing.T) {
	plats, _ := parsePlatforms(defaultPlatforms)
	var first map[string][]byte
	for i := range 2 {
		out := t.TempDir()
		names, err := fakeRelease(t, out).run(plats)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]byte{}
		for _, n := range names {
			got[n], err = os.ReadFile(filepath.Join(out, n))
			if err != nil {
				t.Fatal(err)
			}
		}
		if i == 0 {
			first = got
			time.Sleep(1100 * time.Millisecond) // a later second for anything that leaks time.Now
			continue
		}
		if len(got) != 7 {
			t.Errorf("got %d files, want 6 archives and checksums.txt", len(got))
		}
		for n, b := range got {
			if !bytes.Equal(b, first[n]) {
				t.Errorf("%s differs between two builds", n)
			}
		}
	}
	checkTarGz(t, first["credwatch_v1.2.3_linux_arm64.tar.gz"])
	checkZip(t, first["credwatch_v1.2.3_windows_amd64.zip"])
}

const wantEntries = "LICENSE README.md completions/ completions/credwatch.bash completions/credwatch.fish completions/credwatch.ps1 completions/credwatch.zsh"

func checkTarGz(t *testing.T, b []byte) {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("gzip header has name %q, time %v", gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || !h.ModTime.Equal(time.Unix(1700000000, 0)) {
			t.Errorf("%s: owner %d:%d %q, time %v", h.Name, h.Uid, h.Gid, h.Uname, h.ModTime)
		}
		if h.Name == "credwatch" && h.Mode != 0o755 {
			t.Errorf("credwatch has mode %o", h.Mode)
		}
	}
	if got := strings.Join(names, " "); got != wantEntries+" credwatch" {
		t.Errorf("tar entries: %s", got)
	}
}

func checkZip(t *testing.T, b []byte) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, " "); got != wantEntries+" credwatch.exe" {
		t.Errorf("zip entries: %s", got)
	}
}

func TestChecksumsFormat(t *testing.T) {
	out := t.TempDir()
	plats, _ := parsePlatforms("windows/arm64,linux/amd64")
	if _, err := fakeRelease(t, out).run(plats); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^[0-9a-f]{64}  credwatch_v1\.2\.3_linux_amd64\.tar\.gz\n[0-9a-f]{64}  credwatch_v1\.2\.3_windows_arm64\.zip\n$`)
	if !want.Match(raw) {
		t.Errorf("checksums.txt:\n%s", raw)
	}
}
