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
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// wantEntries are an archive's entries before the binary (bin), which sorts among them, and
// wantMan some of the man pages after it.
const wantEntries = "LICENSE README.md completions/ completions/credwatch.bash completions/credwatch.fish completions/credwatch.ps1 completions/credwatch.zsh"

var wantMan = []string{"man/man1/credwatch.1", "man/man1/credwatch-check.1", "man/man1/credwatch-preflight.1",
	"man/man1/credwatch-keys-jwks.1", "man/man1/credwatch-completion-bash.1"}

// checkEntries: the names are wantEntries, bin, the kubectl shim and then only man pages, at least
// wantMan; the binary and the shim are executable.
func checkEntries(t *testing.T, names []string, modes map[string]int64, bin string) {
	t.Helper()
	head := strings.Fields(wantEntries + " " + bin + " " + shimName + " man/ man/man1/")
	if len(names) < len(head) || strings.Join(names[:len(head)], " ") != strings.Join(head, " ") {
		t.Fatalf("entries %q, want them to start with %q", names, head)
	}
	man := names[len(head):]
	for _, n := range man {
		if !strings.HasPrefix(n, manDir) || !strings.HasSuffix(n, ".1") {
			t.Errorf("%s after the man directory is not a man page", n)
		}
	}
	for _, w := range wantMan {
		if !slices.Contains(man, w) {
			t.Errorf("no %s among the man pages %q", w, man)
		}
	}
	for _, x := range []string{bin, shimName} {
		if modes[x]&0o111 == 0 {
			t.Errorf("%s has mode %o, want it executable", x, modes[x])
		}
	}
}

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
	modes := map[string]int64{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		modes[h.Name] = h.Mode
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || !h.ModTime.Equal(time.Unix(1700000000, 0)) {
			t.Errorf("%s: owner %d:%d %q, time %v", h.Name, h.Uid, h.Gid, h.Uname, h.ModTime)
		}
		if h.Name == "credwatch" && h.Mode != 0o755 {
			t.Errorf("credwatch has mode %o", h.Mode)
		}
	}
	checkEntries(t, names, modes, "credwatch")
}

func checkZip(t *testing.T, b []byte) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	modes := map[string]int64{}
	for _, f := range zr.File {
		names = append(names, f.Name)
		modes[f.Name] = int64(f.Mode().Perm())
	}
	checkEntries(t, names, modes, "credwatch.exe")
}

// TestManPages: a page per command, headed with the release's version and source date (not
// today's: the archives are reproducible), in roff, with the command's own help in it.
func TestManPages(t *testing.T) {
	date := time.Date(2023, time.November, 14, 22, 13, 20, 0, time.UTC)
	pages, err := manPages("v1.2.3", date)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{}
	for _, p := range pages {
		byName[p.name] = string(p.data)
		if p.mode != 0o644 {
			t.Errorf("%s has mode %o", p.name, p.mode)
		}
	}
	check := byName[manDir+"credwatch-check.1"]
	for _, want := range []string{
		`.TH "CREDWATCH-CHECK" "1" "Nov 2023" "credwatch v1.2.3" "credwatch manual"`,
		".SH NAME\ncredwatch-check - ", "\\fBcredwatch check [flags]\\fP", "--fail-on", ".SH SEE ALSO",
	} {
		if !strings.Contains(check, want) {
			t.Errorf("credwatch-check.1 lacks %q:\n%s", want, check)
		}
	}
	if strings.Contains(check, "Auto generated") {
		t.Error("credwatch-check.1 carries cobra's auto-generated tag")
	}
	for _, absent := range []string{"credwatch-help.1", "credwatch-__complete.1"} {
		if _, ok := byName[manDir+absent]; ok {
			t.Errorf("%s is generated: cobra's own command", absent)
		}
	}
}

// TestShim: kubectl_complete-credwatch asks kubectl-credwatch (krew's name) for cobra's
// completions of the arguments kubectl gives it, or credwatch when that is all there is.
func TestShim(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, shimName)
	if err := os.WriteFile(script, []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	fake := func(dir, name string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := "#!/bin/sh\nprintf %s " + name + "\nprintf ' [%s]' \"$@\"\necho\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	both, plain := filepath.Join(dir, "both"), filepath.Join(dir, "plain")
	fake(both, "kubectl-credwatch")
	fake(both, "credwatch")
	fake(plain, "credwatch")
	for _, tt := range []struct{ path, want string }{
		{both, "kubectl-credwatch [__complete] [check] [--context] [a b] []\n"},
		{plain, "credwatch [__complete] [check] [--context] [a b] []\n"},
	} {
		cmd := exec.Command(sh, script, "check", "--context", "a b", "")
		cmd.Env = []string{"PATH=" + tt.path + ":/usr/bin:/bin"}
		out, err := cmd.Output()
		if err != nil || string(out) != tt.want {
			t.Errorf("PATH=%s: %s printed %q, %v; want %q", tt.path, shimName, out, err, tt.want)
		}
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
