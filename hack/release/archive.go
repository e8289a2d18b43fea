// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// release writes the archives of one version.
type release struct {
	version, commit string
	mtime           time.Time // every archive entry's time
	root, out       string    // the repository (README.md, LICENSE) and the output directory
	log             io.Writer
	// build writes the credwatch binary for goos/goarch to out; complete prints the completion
	// script of bin (a host binary) for shell. Tests replace both.
	build    func(goos, goarch, out string) error
	complete func(bin, shell string) ([]byte, error)
}

// file is one archive entry.
type file struct {
	name string
	mode int64
	data []byte
}

// shells are the completion scripts an archive carries, by file extension.
func shells() map[string]string {
	return map[string]string{"bash": "bash", "zsh": "zsh", "fish": "fish", "powershell": "ps1"}
}

// archiveName is credwatch_<version>_<os>_<arch>.tar.gz, .zip for windows (hack/krew names
// them alike).
func archiveName(version string, p platform) string {
	ext := ".tar.gz"
	if p.OS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("credwatch_%s_%s_%s%s", version, p.OS, p.Arch, ext)
}

// run builds every platform, writes its archive and then checksums.txt; it returns the names
// written in out.
func (r release) run(plats []platform) ([]string, error) {
	tmp, err := os.MkdirTemp("", "credwatch-release-")
	if err != nil {
		return nil, fmt.Errorf("temporary build directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(r.out, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	common, err := r.commonFiles(tmp)
	if err != nil {
		return nil, err
	}
	sums := map[string][sha256.Size]byte{}
	var names []string
	for _, p := range plats {
		name, sum, err := r.platform(tmp, p, common)
		if err != nil {
			return names, err
		}
		sums[name] = sum
		names = append(names, name)
	}
	if err := os.WriteFile(filepath.Join(r.out, "checksums.txt"), checksums(sums), 0o644); err != nil {
		return names, fmt.Errorf("write checksums: %w", err)
	}
	return append(names, "checksums.txt"), nil
}

// commonFiles are README.md, LICENSE, the completions, kubectl's completion shim and the man
// pages, the same in every archive.
func (r release) commonFiles(tmp string) ([]file, error) {
	var fs []file
	for _, n := range []string{"README.md", "LICENSE"} {
		data, err := os.ReadFile(filepath.Join(r.root, n))
		if err != nil {
			return nil, fmt.Errorf("archive file: %w", err)
		}
		fs = append(fs, file{n, 0o644, data})
	}
	fs = append(fs, file{shimName, 0o755, []byte(shim)})
	man, err := manPages(r.version, r.mtime)
	if err != nil {
		return nil, err
	}
	fs = append(fs, man...)
	host := hostPlatform()
	bin := binPath(tmp, host)
	fmt.Fprintf(r.log, "release: building credwatch for %s (completions)\n", host)
	if err := r.build(host.OS, host.Arch, bin); err != nil {
		return nil, err
	}
	for shell, ext := range shells() {
		data, err := r.complete(bin, shell)
		if err != nil {
			return nil, err
		}
		fs = append(fs, file{"completions/credwatch." + ext, 0o644, data})
	}
	return fs, nil
}

// binPath is where p's binary is built: credwatch, credwatch.exe for windows.
func binPath(tmp string, p platform) string {
	bin := "credwatch"
	if p.OS == "windows" {
		bin += ".exe"
	}
	return filepath.Join(tmp, p.OS+"_"+p.Arch, bin)
}

// platform builds one platform's binary and writes its archive.
func (r release) platform(tmp string, p platform, common []file) (string, [sha256.Size]byte, error) {
	binFile := binPath(tmp, p)
	bin := filepath.Base(binFile)
	if _, err := os.Stat(binFile); err != nil { // the host's is built already, for the completions
		fmt.Fprintf(r.log, "release: building credwatch for %s\n", p)
		if err := r.build(p.OS, p.Arch, binFile); err != nil {
			return "", [sha256.Size]byte{}, err
		}
	}
	data, err := os.ReadFile(binFile)
	if err != nil {
		return "", [sha256.Size]byte{}, fmt.Errorf("read the %s binary: %w", p, err)
	}
	files := append([]file{{bin, 0o755, data}}, common...)
	var b bytes.Buffer
	if p.OS == "windows" {
		err = writeZip(&b, files, r.mtime)
	} else {
		err = writeTarGz(&b, files, r.mtime)
	}
	name := archiveName(r.version, p)
	if err != nil {
		return "", [sha256.Size]byte{}, fmt.Errorf("archive %s: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(r.out, name), b.Bytes(), 0o644); err != nil {
		return "", [sha256.Size]byte{}, fmt.Errorf("write %s: %w", name, err)
	}
	fmt.Fprintf(r.log, "release: wrote %s (%d bytes; binary %d bytes)\n", name, b.Len(), len(data))
	return name, sha256.Sum256(b.Bytes()), nil
}

// entries sorts files by name and adds the directories they sit in, each once, before them.
func entries(files []file) []file {
	all := map[string]file{}
	for _, f := range files {
		all[f.name] = f
		for d := path.Dir(f.name); d != "."; d = path.Dir(d) {
			all[d+"/"] = file{name: d + "/", mode: 0o755}
		}
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]file, len(names))
	for i, n := range names {
		out[i] = all[n]
	}
	return out
}

// writeTarGz writes a gzip'd tar of files: sorted, owner 0:0, every time mtime, no gzip name
// or time.
func writeTarGz(w io.Writer, files []file, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	tw := tar.NewWriter(gz)
	for _, f := range entries(files) {
		h := &tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mtime,
			Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if strings.HasSuffix(f.name, "/") {
			h.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("tar header %s: %w", f.name, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return fmt.Errorf("tar %s: %w", f.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("tar: %w", err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	return nil
}

// writeZip writes a zip of files: sorted, deflated, every time mtime.
func writeZip(w io.Writer, files []file, mtime time.Time) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	for _, f := range entries(files) {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(os.FileMode(f.mode))
		if strings.HasSuffix(f.name, "/") {
			h.Method = zip.Store
			h.SetMode(os.ModeDir | os.FileMode(f.mode))
		}
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return fmt.Errorf("zip header %s: %w", f.name, err)
		}
		if _, err := fw.Write(f.data); err != nil {
			return fmt.Errorf("zip %s: %w", f.name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("zip: %w", err)
	}
	return nil
}

// checksums is checksums.txt: "<sha256>  <name>" lines sorted by name, as sha256sum writes them.
func checksums(sums map[string][sha256.Size]byte) []byte {
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(&b, "%x  %s\n", sums[n], n)
	}
	return b.Bytes()
}
