// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOrphanShim: a containerd shim whose working directory is under the node's directory is the
// node's even when nothing else says so (it survived the lab's owner, which was killed); a shell
// in the same directory, or a shim elsewhere, is not.
func TestOrphanShim(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "capi-hosts", "w1-control-plane-abcde")
	proc := func(cwd string) string {
		base := filepath.Join(t.TempDir(), "proc", "4242")
		if err := os.MkdirAll(base, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(cwd, filepath.Join(base, "cwd")); err != nil {
			t.Fatal(err)
		}
		return base
	}
	bundle := dir + "/containerd/state/io.containerd.runtime.v2.task/k8s.io/c581f9ba"
	for _, tc := range []struct {
		comm, cwd string
		want      bool
	}{
		{"containerd-shim-runc-v2\n", bundle, true},
		{"containerd-shim-runc-v2\n", bundle + " (deleted)", true},
		{"bash\n", bundle, false},
		{"containerd-shim-runc-v2\n", "/run/containerd/io.containerd.runtime.v2.task/k8s.io/x", false},
		{"containerd-shim-runc-v2\n", dir + "-other/containerd", false},
	} {
		if got := orphanShim(proc(tc.cwd), tc.comm, dir); got != tc.want {
			t.Errorf("orphanShim(%q in %q) = %v, want %v", tc.comm, tc.cwd, got, tc.want)
		}
	}
}
