// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// TestIntegrationCLISelfManagedKilledMidRoll runs `lab scenario capi-self-managed-roll` through
// the CLI, SIGKILLs it once the cluster rolls itself (the managers, the platform and the chart's
// watcher running as Pods on its hosts, a new machine's host started by the moved managers), and
// requires `lab down` to leave nothing: no process naming the lab, no host cgroup, no network
// namespace, no mount under the lab directory. It takes about 6 minutes: make test-capi-long.
func TestIntegrationCLISelfManagedKilledMidRoll(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: skipped under -short")
	}
	labtest.CAPILong(t)
	needCAPIBinaries(t, capi.V1142)
	bin := buildCLI(t)
	dir := filepath.Join(t.TempDir(), "lab")
	t.Cleanup(func() { _, _ = lab.KillLeftovers(dir) })
	cmd := exec.Command(bin, "lab", "scenario", "capi-self-managed-roll", "--capi", capi.V1142, "--lb-check", "tcp", "--dir", dir, "-o", "json")
	cmd.Env = append(os.Environ(), "CREDWATCH_LAB_BIN="+lab.DefaultBinDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	watcherUp := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "in-cluster watcher running") {
				once = true
				close(watcherUp)
			}
		}
		exited <- cmd.Wait()
	}()
	select {
	case <-watcherUp:
	case err := <-exited:
		t.Fatalf("the scenario ended before the cluster managed itself: %v", err)
	case <-time.After(20 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("the cluster did not manage itself within 20 minutes")
	}
	hosts := filepath.Join(dir, lab.CAPIHostsDir)
	before := hostRoots(hosts)
	t.Logf("moved, the chart's watcher running; %d hosts so far; waiting for the self-managed roll's new host", len(before))
	deadline := time.Now().Add(5 * time.Minute)
	for len(hostRoots(hosts)) <= len(before) {
		if time.Now().After(deadline) {
			t.Fatalf("the self-managed roll made no new host within 5 minutes (hosts %v)", before)
		}
		time.Sleep(500 * time.Millisecond)
	}
	roots := hostRoots(hosts)
	if err := syscall.Kill(cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	t.Logf("scenario %d killed mid self-managed roll, %d hosts made", cmd.Process.Pid, len(roots))
	st, err := lab.ReadState(dir)
	if err != nil {
		t.Fatalf("the killed scenario's lab state: %v", err)
	}
	prefix := st.NetworkPrefix
	if _, code := run(t, bin, "lab", "down", "--dir", dir); code != 0 {
		t.Errorf("lab down after the self-managed scenario was killed: exit %d", code)
	}
	waitGone(t, dir)
	for _, root := range roots {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", root)); err == nil {
			t.Errorf("host cgroup %s left", root)
		}
	}
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil && prefix != "" && strings.Contains(string(out), prefix+"-") {
		t.Errorf("network namespaces of %s left:\n%s", prefix, out)
	}
	if data, err := os.ReadFile("/proc/self/mountinfo"); err == nil && strings.Contains(string(data), dir) {
		t.Errorf("mounts under %s left", dir)
	}
}

// hostRoots are the cgroup roots the lab's Cluster API hosts recorded under hosts.
func hostRoots(hosts string) []string {
	var roots []string
	dirs, _ := filepath.Glob(filepath.Join(hosts, "*"))
	for _, d := range dirs {
		if data, err := os.ReadFile(filepath.Join(d, "cgroup-root")); err == nil {
			roots = append(roots, strings.TrimSpace(string(data)))
		}
	}
	return roots
}
