// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"fmt"
	"runtime/debug"
)

// Build information, set with -ldflags "-X github.com/credwatch/credwatch/internal/cli.version=...".
var (
	version = "dev"
	commit  = ""
)

// BuildInfo is what `credwatch version` prints.
type BuildInfo struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Version    string `json:"version"`
	Commit     string `json:"commit"`
	GoVersion  string `json:"goVersion"`
}

// Build reports the binary's version, commit and Go version; the commit falls back to the VCS
// stamp Go records.
func Build() BuildInfo {
	b := BuildInfo{APIVersion: "credwatch.dev/v1alpha1", Kind: "Version", Version: version, Commit: commit}
	if info, ok := debug.ReadBuildInfo(); ok {
		b.GoVersion = info.GoVersion
		if b.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && b.Commit == "" {
				b.Commit = s.Value
			}
		}
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

// String is the one line `credwatch version` and `credwatch --version` print.
func (b BuildInfo) String() string {
	return fmt.Sprintf("credwatch %s (commit %s, %s)", b.Version, b.Commit, b.GoVersion)
}
