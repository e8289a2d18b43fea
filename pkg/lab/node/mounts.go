// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// kubeletSysctls are the host-wide sysctls the kubelet sets on start (container manager's
// setupKernelTunables) with the values it wants. Inside the node's mount namespace a file holding
// that value is bind-mounted over each, so the kubelet finds them as it wants them and never writes
// the machine's.
var kubeletSysctls = []struct {
	key   string // under /proc/sys
	value int
}{
	{"vm/overcommit_memory", 1},
	{"vm/panic_on_oom", 0},
	{"kernel/panic", 10},
	{"kernel/panic_on_oops", 1},
	{"kernel/keys/root_maxkeys", 1000000},
	{"kernel/keys/root_maxbytes", 25000000},
}

// hostDir is the node directory bind-mounted over a machine directory d in hiddenDirs.
func (c *Config) hostDir(d string) string {
	return c.path("host", strings.ReplaceAll(strings.TrimPrefix(d, "/"), "/", "-"))
}

// sysctlFile is the file bind-mounted over /proc/sys/KEY.
func (c *Config) sysctlFile(key string) string {
	return c.path("sysctl", strings.ReplaceAll(key, "/", "."))
}

func (c *Config) writeSysctlFiles() error {
	for _, s := range kubeletSysctls {
		if err := os.WriteFile(c.sysctlFile(s.key), []byte(strconv.Itoa(s.value)+"\n"), 0o644); err != nil {
			return fmt.Errorf("node %s: sysctl file: %w", c.Name, err)
		}
	}
	return nil
}

// holderScript runs inside the new private mount namespace (and the node's network namespace):
// it makes the mounts, marks itself ready and then only holds the namespace.
func (c *Config) holderScript() string {
	var b strings.Builder
	// The copies of the machine's network namespace mounts would keep every lab's namespaces
	// alive for as long as this node runs: drop them (only here: the namespace is private).
	b.WriteString("set -e\numount --recursive --lazy /run/netns 2>/dev/null || true\n")
	// Its own UTS namespace too: the node's hostname is its name, as on a VM (the in-tree cloud
	// providers name the Node after os.Hostname and ignore --hostname-override).
	fmt.Fprintf(&b, "printf '%%s' '%s' > /proc/sys/kernel/hostname\n", c.Name)
	for _, s := range kubeletSysctls {
		fmt.Fprintf(&b, "mount --bind '%s' '/proc/sys/%s'\n", c.sysctlFile(s.key), s.key)
	}
	for _, d := range c.hidden() {
		fmt.Fprintf(&b, "mount --bind '%s' '%s'\n", c.hostDir(d), d)
	}
	if c.Kubeadm != nil {
		// kubeadm's preflight wants forwarding on; the sysctl is the node's network namespace's.
		b.WriteString("echo 1 > /proc/sys/net/ipv4/ip_forward\n")
	}
	fmt.Fprintf(&b, ": > '%s'\nexec sleep infinity\n", c.path("holder.ready"))
	return b.String()
}

// startHolder starts the process that holds the node's mount namespace: a fresh private mount
// namespace (Go makes / rprivate, so nothing propagates to the machine) entered into the node's
// network namespace. It returns once the mounts are made.
func (n *Node) startHolder(ctx context.Context) error {
	if err := n.cfg.writeSysctlFiles(); err != nil {
		return err
	}
	p, err := proc.Start(proc.Spec{
		Name: "holder", Bin: "nsenter", Args: []string{"--net=" + n.cfg.Host.NetNS, "--", "/bin/sh", "-c", n.cfg.holderScript()},
		LogFile: n.cfg.logFile("holder"), Env: n.env(), Attr: &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS},
	})
	if err != nil {
		return fmt.Errorf("node %s: %w", n.cfg.Name, err)
	}
	n.holder = p
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		if done, err := p.Exited(); done {
			return fmt.Errorf("node %s: mount namespace holder exited (%v):\n%s", n.cfg.Name, err, proc.Tail(p.LogFile, 20))
		}
		if _, err := os.Stat(n.cfg.path("holder.ready")); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s: mount namespace not ready: %w", n.cfg.Name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", p.PID()))
	if err != nil {
		return fmt.Errorf("node %s: mount namespace of the holder: %w", n.cfg.Name, err)
	}
	if own, _ := os.Readlink("/proc/self/ns/mnt"); own == ns {
		return fmt.Errorf("node %s: the holder did not get a mount namespace of its own", n.cfg.Name)
	}
	n.mntNS = ns
	rec := fmt.Sprintf("%d %s %s\n", p.PID(), startTime(p.PID()), ns)
	return os.WriteFile(n.cfg.path("holder"), []byte(rec), 0o644)
}

// recordedMountNS is the mount namespace recorded by an earlier run in dir, if its holder still
// runs (same pid and start time: a namespace id or pid alone may have been reused since).
func recordedMountNS(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "holder"))
	if err != nil {
		return ""
	}
	var pid int
	var start, ns string
	if _, err := fmt.Sscan(string(data), &pid, &start, &ns); err != nil || start == "" || startTime(pid) != start {
		return ""
	}
	return ns
}

// startTime is field 22 of /proc/PID/stat (clock ticks after boot), or "" if pid is gone.
func startTime(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(data, ')')
	f := strings.Fields(string(data[i+1:]))
	if i < 0 || len(f) < 20 {
		return ""
	}
	return f[19]
}

// startInNode starts bin with args inside the node's mount and network namespaces.
func (n *Node) startInNode(name, bin string, args ...string) (*proc.Proc, error) {
	p, err := proc.Start(n.inNodeSpec(name, bin, args...))
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", n.cfg.Name, err)
	}
	return p, nil
}

// inNodeSpec is the process spec of bin with args inside the node's namespaces, logging to
// logs/NAME.log.
func (n *Node) inNodeSpec(name, bin string, args ...string) proc.Spec {
	return proc.Spec{Name: name, Bin: "nsenter", Args: append(n.nsenterArgs(bin), args...), LogFile: n.cfg.logFile(name), Env: n.env()}
}

func (n *Node) nsenterArgs(bin string) []string {
	return []string{"--target", strconv.Itoa(n.holder.PID()), "--mount", "--net", "--uts", "--", bin}
}

// Command is bin with args run inside the node's mount, network and UTS namespaces with the
// node's environment (on a kubeadm host: kubeadm, crictl and kubelet first on PATH), as a command
// run on the machine the node stands for: what a bootstrap's runcmd runs.
func (n *Node) Command(ctx context.Context, bin string, args ...string) (*exec.Cmd, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped || n.holder == nil {
		return nil, fmt.Errorf("node %s is not running", n.cfg.Name)
	}
	cmd := exec.CommandContext(ctx, "nsenter", append(n.nsenterArgs(bin), args...)...)
	cmd.Env = n.env()
	return cmd, nil
}

// env is the environment of the node's processes: temporary files in the node, iptables on PATH.
func (n *Node) env() []string {
	env := []string{"TMPDIR=" + n.cfg.path("tmp"), "GOMAXPROCS=2"}
	path := os.Getenv("PATH")
	if n.cfg.Kubeadm != nil {
		path = n.cfg.binDir() + ":" + path
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		if !strings.Contains(":"+path+":", ":"+d+":") {
			path += ":" + d
		}
	}
	env = append(env, "PATH="+strings.TrimPrefix(path, ":"))
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "TMPDIR" || k == "GOMAXPROCS" || k == "PATH" {
			continue
		}
		// A kubeadm host is a machine of the lab network: the machine's proxy is not its
		// (kubeadm's preflight refuses proxy settings that would catch the cluster's ranges).
		if n.cfg.Kubeadm != nil && strings.HasSuffix(strings.ToLower(k), "_proxy") {
			continue
		}
		env = append(env, kv)
	}
	return env
}
