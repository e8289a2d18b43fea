// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab/node"
)

// logRSS logs the resident memory of the node's processes and of its containerd shims.
func logRSS(t *testing.T, n *node.Node) {
	for name, pid := range n.PIDs() {
		t.Logf("FIGURE RSS %s %s", name, vmRSS(pid))
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.HasPrefix(string(cmdline), "/usr/bin/containerd-shim") && strings.Contains(string(cmdline), n.Dir()+"/") {
			var pid int
			_, _ = fmt.Sscan(e.Name(), &pid)
			t.Logf("FIGURE RSS containerd-shim (pid %d) %s", pid, vmRSS(pid))
		}
	}
}

func vmRSS(pid int) string {
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func tailFile(file string, n int) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
