// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// fixedHostPaths are the machine paths the kubelet and containerd write whatever their
// configuration says. The node's mount namespace puts them in the node directory; Leftovers
// checks that none appeared on the machine.
var fixedHostPaths = []string{
	"/var/lib/kubelet", "/var/lib/cni", "/var/lib/containerd", "/var/log/containers", "/var/log/pods",
	"/run/containerd", "/opt/containerd", "/usr/libexec/kubernetes", "/etc/kubernetes",
}

// Stop ends the node: the kubelet and kube-proxy (SIGTERM, then SIGKILL after StopGrace), every
// container, containerd and its shims, then the mount namespace holder, so the namespace and every
// mount in it go; then it removes the cgroup root. It returns an error listing anything left
// behind. It may be called more than once.
func (n *Node) Stop(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	grace := n.cfg.StopGrace
	var wg sync.WaitGroup
	for _, p := range []*proc.Proc{n.kubelet, n.proxy} {
		wg.Add(1)
		go func() { defer wg.Done(); p.Stop(grace) }()
	}
	n.supervised.Stop(grace)
	wg.Wait()
	killPIDs(cgroupPIDs(n.cfg.CgroupRoot)) // the containers: nothing restarts them now
	n.containerd.Stop(grace)
	sweepErr := sweep(ctx, n.cfg.Dir, n.cfg.CgroupRoot, n.mntNS)
	n.holder.Stop(grace)
	n.stopped = true
	left := removeCgroupsWait(ctx, n.cfg.CgroupRoot)
	if sweepErr != nil {
		return sweepErr
	}
	if l := n.leftovers(); len(l) > 0 {
		return fmt.Errorf("node %s left behind: %s", n.cfg.Name, strings.Join(append(left, l...), "; "))
	}
	n.logf("node %s: stopped", n.cfg.Name)
	return nil
}

// Cleanup ends whatever a node whose owner died left running in dir with cgroup root cgroupRoot
// (processes in its mount namespace, its cgroups or naming dir) and removes its cgroups.
func Cleanup(dir, cgroupRoot string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := sweep(ctx, dir, cgroupRoot, recordedMountNS(dir)); err != nil {
		return err
	}
	if left := removeCgroupsWait(ctx, cgroupRoot); len(left) > 0 {
		return fmt.Errorf("cgroups left: %s", strings.Join(left, ", "))
	}
	return nil
}

// cgroupRootFile records, in the node directory, the cgroup root the node was started with.
const cgroupRootFile = "cgroup-root"

// CleanupDir is Cleanup for a node directory whose cgroup root only the directory records (a
// Cluster API host the lab's state does not list). A directory that holds no node is left alone.
func CleanupDir(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, cgroupRootFile))
	if err != nil {
		return nil
	}
	root := strings.TrimSpace(string(data))
	if !strings.HasPrefix(root, "/") || root == "/" || strings.Contains(root, "..") {
		return fmt.Errorf("node directory %s: recorded cgroup root %q is not one a node uses", dir, root)
	}
	return Cleanup(dir, root)
}

// sweep SIGKILLs the node's processes (nodeProcesses) until none is left.
func sweep(ctx context.Context, dir, cgroupRoot, mntNS string) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		var pids []int
		for _, p := range nodeProcesses(dir, cgroupRoot, mntNS) {
			pids = append(pids, p.pid)
		}
		if len(pids) == 0 {
			return nil
		}
		killPIDs(pids)
		select {
		case <-ctx.Done():
			return fmt.Errorf("processes of node %s still running: %v", dir, pids)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func killPIDs(pids []int) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func removeCgroupsWait(ctx context.Context, root string) []string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		left := removeCgroups(root)
		if len(left) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return left
		case <-time.After(100 * time.Millisecond):
		}
	}
}

type nodeProc struct {
	pid  int
	comm string
}

// nodeProcesses finds every process of a node: in its mount namespace (holder, containerd, shims,
// kubelet, kube-proxy, CNI plugins), in its cgroups (containers), or naming its directory on the
// command line (a node started before its namespace existed).
func nodeProcesses(dir, cgroupRoot, mntNS string) []nodeProc {
	inCgroup := cgroupPIDs(cgroupRoot)
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	var out []nodeProc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		base := "/proc/" + e.Name()
		ns, _ := os.Readlink(base + "/ns/mnt")
		cmdline, _ := os.ReadFile(base + "/cmdline")
		comm, _ := os.ReadFile(base + "/comm")
		if (mntNS != "" && ns == mntNS) || slices.Contains(inCgroup, pid) ||
			bytes.Contains(append(cmdline, 0), []byte(dir+"/")) || bytes.Contains(append(cmdline, 0), []byte(dir+"\x00")) ||
			orphanShim(base, string(comm), dir) {
			out = append(out, nodeProc{pid, strings.TrimSpace(string(comm))})
		}
	}
	return out
}

// orphanShim reports whether the process at base is a containerd shim working in the node's
// directory: a shim outlives its containerd, leaves the node's cgroup root when its holder is
// gone, and names only the containerd socket on its command line, but runs in its task's bundle
// under the node's containerd state (seen after the lab's owner was killed). Only shims are
// matched by their working directory: a shell cd'ed into the lab directory is not the lab's.
func orphanShim(base, comm, dir string) bool {
	if !strings.HasPrefix(strings.TrimSpace(comm), "containerd-shim") {
		return false
	}
	cwd, err := os.Readlink(base + "/cwd")
	return err == nil && strings.HasPrefix(cwd, dir+"/")
}

// hostState is what Leftovers compares with: which fixed host paths existed and the kubelet's
// sysctls' values before Start.
type hostState struct {
	existed map[string]bool
	sysctl  map[string]string
}

func snapshotHost() hostState {
	s := hostState{existed: map[string]bool{}, sysctl: map[string]string{}}
	for _, p := range fixedHostPaths {
		_, err := os.Lstat(p)
		s.existed[p] = err == nil
	}
	for _, k := range kubeletSysctls {
		v, _ := os.ReadFile("/proc/sys/" + k.key)
		s.sysctl[k.key] = strings.TrimSpace(string(v))
	}
	return s
}

// Leftovers lists what the node left on the machine: running processes, mounts in the machine's
// mount namespace under the node directory, cgroups, fixed host paths that appeared and host
// sysctls that changed since Start. Empty after a clean Stop.
func (n *Node) Leftovers() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.leftovers()
}

func (n *Node) leftovers() []string {
	var out []string
	for _, p := range nodeProcesses(n.cfg.Dir, n.cfg.CgroupRoot, n.mntNS) {
		out = append(out, fmt.Sprintf("process %d (%s)", p.pid, p.comm))
	}
	for _, m := range mountsUnder(n.cfg.Dir) {
		out = append(out, "mount "+m)
	}
	for _, d := range cgroupDirs(n.cfg.CgroupRoot) {
		out = append(out, "cgroup "+d)
	}
	now := snapshotHost()
	for _, p := range fixedHostPaths {
		if now.existed[p] && !n.before.existed[p] {
			out = append(out, "host path "+p)
		}
	}
	for _, k := range kubeletSysctls {
		if now.sysctl[k.key] != n.before.sysctl[k.key] {
			out = append(out, fmt.Sprintf("sysctl %s changed from %s to %s", k.key, n.before.sysctl[k.key], now.sysctl[k.key]))
		}
	}
	return out
}

// mountsUnder lists the machine's mount points at or under dir.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return []string{"(cannot read /proc/self/mountinfo: " + err.Error() + ")"}
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if mp, _, ok := mountFields(sc.Text()); ok && (mp == dir || strings.HasPrefix(mp, dir+"/")) {
			out = append(out, mp)
		}
	}
	return out
}
