// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestReleaseDeps keeps what only the lab needed, and used to weigh 5 MB, out of the binary: the
// lab talks to etcd through its JSON gateway, so neither etcd's client nor gRPC may be linked; and
// the HTML charts are drawn by pkg/timechart, so no plotting library and its fonts (6.8 MB).
func TestReleaseDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, banned := range []string{"go.etcd.io/", "google.golang.org/grpc", "go.uber.org/zap", "gonum.org/", "codeberg.org/go-fonts/"} {
			if strings.HasPrefix(p, banned) {
				t.Errorf("credwatch links %s (banned prefix %s): see docs/dev/binary-size.md", p, banned)
			}
		}
	}
}
