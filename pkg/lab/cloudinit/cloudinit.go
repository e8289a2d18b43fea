// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package cloudinit runs the part of cloud-init that Cluster API's kubeadm bootstrap data uses,
// on a lab host: the `## template: jinja` header's {{ ds.meta_data.* }} (and {{ v1.* }})
// substitution, write_files (path, owner, permissions, encoding, content, append) and runcmd.
// The bootstrap data (sigs.k8s.io/cluster-api bootstrap/kubeadm/internal/cloudinit) holds the
// cluster's CA and service-account keys, so no error here quotes the document.
package cloudinit

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Sentinel is the file Cluster API's runcmd writes once kubeadm succeeded; a provider reports the
// machine bootstrapped when it exists.
const Sentinel = "/run/cluster-api/bootstrap-success.complete"

// maxSize bounds a bootstrap document (a Secret's value is at most 1 MiB).
const maxSize = 1 << 20

// File is one write_files entry.
type File struct {
	Path        string `json:"path"`
	Owner       string `json:"owner,omitempty"`
	Permissions string `json:"permissions,omitempty"`
	Encoding    string `json:"encoding,omitempty"`
	Content     string `json:"content"`
	Append      bool   `json:"append,omitempty"`
}

// Config is a parsed cloud-config: the files to write and the commands to run, in order.
type Config struct {
	Files    []File
	Commands []string
}

var varRE = regexp.MustCompile(`\{\{\s*(ds\.meta_data|v1)\.([A-Za-z0-9_]+)\s*\}\}`)

// Parse reads a cloud-config document; with the jinja header, every {{ ds.meta_data.KEY }} and
// {{ v1.KEY }} is replaced by meta[KEY] first (a KEY not in meta is an error naming it).
func Parse(data []byte, meta map[string]string) (*Config, error) {
	if len(data) > maxSize {
		return nil, fmt.Errorf("cloud-config: %d bytes, more than the %d a bootstrap Secret holds", len(data), maxSize)
	}
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if strings.TrimSpace(string(first)) == "## template: jinja" {
		var missing string
		data = varRE.ReplaceAllFunc(rest, func(m []byte) []byte {
			key := string(varRE.FindSubmatch(m)[2])
			v, ok := meta[key]
			if !ok && missing == "" {
				missing = key
			}
			return []byte(v)
		})
		if missing != "" {
			return nil, fmt.Errorf("cloud-config: template variable %q has no instance metadata", missing)
		}
	}
	if first, _, _ := bytes.Cut(bytes.TrimLeft(data, "\n"), []byte("\n")); strings.TrimSpace(string(first)) != "#cloud-config" {
		return nil, fmt.Errorf("cloud-config: the document does not start with #cloud-config")
	}
	var doc struct {
		WriteFiles []File            `json:"write_files"`
		RunCmd     []json.RawMessage `json:"runcmd"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("cloud-config: %w", err)
	}
	c := &Config{Files: doc.WriteFiles}
	for i, f := range c.Files {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path {
			return nil, fmt.Errorf("cloud-config: write_files[%d]: path %q is not a clean absolute path", i, f.Path)
		}
		if _, err := f.mode(); err != nil {
			return nil, fmt.Errorf("cloud-config: write_files[%d] (%s): %w", i, f.Path, err)
		}
		if _, err := f.Data(); err != nil {
			return nil, fmt.Errorf("cloud-config: write_files[%d] (%s): %w", i, f.Path, err)
		}
	}
	for i, raw := range doc.RunCmd {
		cmd, err := command(raw)
		if err != nil {
			return nil, fmt.Errorf("cloud-config: runcmd[%d]: %w", i, err)
		}
		c.Commands = append(c.Commands, cmd)
	}
	return c, nil
}

// command is a runcmd entry: a shell string, or an argv list that is quoted into one.
func command(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var argv []string
	if err := json.Unmarshal(raw, &argv); err != nil || len(argv) == 0 {
		return "", fmt.Errorf("want a string or a list of strings")
	}
	for i, a := range argv {
		argv[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(argv, " "), nil
}

// Data is the file's content after its encoding (b64/base64, gz/gzip, gz+b64/gzip+base64).
func (f File) Data() ([]byte, error) {
	raw := []byte(f.Content)
	enc := strings.ToLower(f.Encoding)
	if strings.Contains(enc, "b64") || strings.Contains(enc, "base64") {
		d, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(f.Content), ""))
		if err != nil {
			return nil, fmt.Errorf("encoding %s: content is not base64", f.Encoding)
		}
		raw = d
	}
	switch enc {
	case "", "text/plain", "b64", "base64":
		return raw, nil
	case "gz", "gzip", "gz+b64", "gzip+base64", "gz+base64", "gzip+b64":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("encoding %s: content is not gzip", f.Encoding)
		}
		d, err := io.ReadAll(io.LimitReader(zr, maxSize+1))
		if err != nil || len(d) > maxSize {
			return nil, fmt.Errorf("encoding %s: content does not inflate within %d bytes", f.Encoding, maxSize)
		}
		return d, nil
	}
	return nil, fmt.Errorf("encoding %q: unknown", f.Encoding)
}

func (f File) mode() (os.FileMode, error) {
	if f.Permissions == "" {
		return 0o644, nil
	}
	m, err := strconv.ParseUint(f.Permissions, 8, 32)
	if err != nil || m > 0o7777 {
		return 0, fmt.Errorf("permissions %q: want an octal mode such as 0640", f.Permissions)
	}
	return os.FileMode(m), nil
}

// WriteFiles writes every file under root (the host's view of /), creating parent directories,
// appending where the entry says so. Owners are left to the caller: lab hosts run as root.
func (c *Config) WriteFiles(root string) error {
	for _, f := range c.Files {
		data, err := f.Data()
		if err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
		mode, _ := f.mode()
		dst := filepath.Join(root, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
		flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		if f.Append {
			flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
		}
		out, err := os.OpenFile(dst, flags, mode)
		if err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
		_, werr := out.Write(data)
		cerr := out.Close()
		if err := errors.Join(werr, cerr, os.Chmod(dst, mode)); err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
	}
	return nil
}
