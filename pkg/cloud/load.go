// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/credwatch/credwatch/internal/userfile"
	"github.com/credwatch/credwatch/pkg/limits"
)

// maxConfigSize bounds a config file; cloud configs are a few KB.
const maxConfigSize = 1 << 20

// LoadPaths reads config files and folders (every regular file in a folder, not recursive, that
// parses as a cloud config; files in a folder that are not cloud configs are skipped). A file
// given by name that does not parse is an error; the other paths are still read.
func LoadPaths(paths []string) ([]*Config, []error) {
	var cfgs []*Config
	var errs []error
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("--config %s: %w", p, err))
			continue
		}
		if !fi.IsDir() {
			c, err := LoadFile(p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			cfgs = append(cfgs, c)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("--config %s: %w", p, err))
			continue
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			c, err := LoadFile(filepath.Join(p, e.Name()))
			if errors.Is(err, ErrUnknownFormat) {
				continue
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			cfgs = append(cfgs, c)
		}
	}
	return cfgs, errs
}

// LoadFile reads and parses one config file; the file's mtime becomes each inline credential's
// Changed time. A secrets-directory it names is read when it exists here. A path that is not a
// regular file (a FIFO, which would block the open past a signal) is refused.
func LoadFile(path string) (*Config, error) {
	f, err := userfile.OpenRead(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if fi.Size() > maxConfigSize {
		return nil, fmt.Errorf("read %w", &limits.TooLargeError{Name: path, Max: maxConfigSize})
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	mt := fi.ModTime()
	src := Source{Kind: SourceFile, Path: path, Changed: &mt}
	cfg, err := Parse(data, src)
	if err != nil {
		return nil, err
	}
	for i, c := range cfg.Credentials {
		if c.Source.Kind == SourceSecretsDirectory && cfg.SecretsDirectory != "" {
			if _, err := os.Stat(cfg.SecretsDirectory); err == nil {
				cfg.Credentials[i] = ReadSecretsDirectory(c, cfg.SecretsDirectory)
			} else if !errors.Is(err, fs.ErrNotExist) {
				cfg.Notes = append(cfg.Notes, fmt.Sprintf("secrets-directory %s: %v", cfg.SecretsDirectory, err))
			}
		}
	}
	if cfg.CloudsFile != "" && filepath.IsAbs(cfg.CloudsFile) {
		if cc, err := LoadFile(cfg.CloudsFile); err == nil && cc.Provider == OpenStack {
			cc.SelectCloud(cfg.Cloud)
			cfg.Credentials = append(cfg.Credentials, cc.Credentials...)
		}
	}
	return cfg, nil
}
