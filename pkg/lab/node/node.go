// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// Node is one running worker node. Its methods are safe for concurrent use.
type Node struct {
	cfg    Config
	before hostState // the machine's fixed paths and sysctls before Start

	mu                                 sync.Mutex
	holder, containerd, kubelet, proxy *proc.Proc
	supervised                         *proc.Restarting // a kubeadm host's or KubeletRestart's kubelet (kubelet is nil)
	mntNS                              string           // "mnt:[inode]" of the node's mount namespace
	stopped                            bool
}

// Start prepares the node directory (emptying it), writes certificates and configurations,
// creates the cgroup root, starts the mount namespace holder, containerd, imports the images and
// starts the kubelet and kube-proxy. It does not wait for the Node to be Ready (WaitReady does).
// On failure everything started is stopped.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if err := cfg.complete(); err != nil {
		return nil, err
	}
	if err := cfg.checkBinaries(); err != nil {
		return nil, err
	}
	// A previous run in this directory whose owner died: end what it left first.
	if err := Cleanup(cfg.Dir, cfg.CgroupRoot); err != nil {
		return nil, fmt.Errorf("node %s: leftovers of an earlier run: %w", cfg.Name, err)
	}
	n := &Node{cfg: cfg, before: snapshotHost()}
	t0 := time.Now()
	if err := n.prepare(); err != nil {
		return nil, err
	}
	if err := n.start(ctx); err != nil {
		return nil, errors.Join(err, n.Stop(context.Background()))
	}
	what := "containerd, kubelet and kube-proxy"
	if cfg.Kubeadm != nil {
		what = "kubeadm host: containerd and the kubelet supervisor"
	}
	n.logf("node %s: %s started in %s after %s", cfg.Name, what, cfg.Host.NetNS, time.Since(t0).Round(time.Millisecond))
	return n, nil
}

func (n *Node) prepare() error {
	c := &n.cfg
	if err := os.RemoveAll(c.Dir); err != nil {
		return fmt.Errorf("node %s: empty directory: %w", c.Name, err)
	}
	dirs := []string{"pki", "logs", "sysctl", "containerd", "containerd/certs.d", "cni/net.d", "cni/ipam", "kubelet", "pod-logs",
		"tmp", "runc", "kubelet-plugins"}
	for _, d := range c.hidden() {
		dirs = append(dirs, c.hostDir(d))
	}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			d = c.path(d)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("node %s: create directory: %w", c.Name, err)
		}
	}
	cni, err := c.cniConflist()
	if err != nil {
		return err
	}
	files := map[string][]byte{
		c.path("cni", "net.d", "10-credwatch-lab.conflist"): cni,
		c.path("containerd", "config.toml"):                 []byte(c.containerdConfig()),
	}
	if c.Kubeadm != nil {
		if err := c.prepareKubeadm(); err != nil {
			return err
		}
	} else if err := c.prepareWorker(files); err != nil {
		return err
	}
	for file, data := range files {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return fmt.Errorf("node %s: write %s: %w", c.Name, file, err)
		}
	}
	if err := c.writeRegistries(); err != nil {
		return err
	}
	// For CleanupDir, when whoever started the node died before it could record the root.
	if err := os.WriteFile(c.path(cgroupRootFile), []byte(c.CgroupRoot+"\n"), 0o644); err != nil {
		return fmt.Errorf("node %s: record cgroup root: %w", c.Name, err)
	}
	return createCgroups(c.CgroupRoot)
}

// prepareWorker writes a worker node's certificates and adds its kubelet and kube-proxy
// configurations to files.
func (c *Config) prepareWorker(files map[string][]byte) error {
	if err := c.writePKI(); err != nil {
		return err
	}
	kubelet, err := c.kubeletConfig()
	if err != nil {
		return err
	}
	proxy, err := c.kubeProxyConfig()
	if err != nil {
		return err
	}
	files[c.path("kubelet.yaml")] = kubelet
	files[c.path("kube-proxy.yaml")] = proxy
	return nil
}

func (n *Node) start(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.startHolder(ctx); err != nil {
		return err
	}
	if err := n.startContainerd(ctx); err != nil {
		return err
	}
	t0 := time.Now()
	if err := n.importImages(ctx); err != nil {
		return err
	}
	n.logf("node %s: %d images imported in %s", n.cfg.Name, len(n.cfg.Images), time.Since(t0).Round(time.Millisecond))
	if n.cfg.Kubeadm != nil {
		return n.startKubeadmKubelet()
	}
	var err error
	if d := n.cfg.KubeletRestart; d > 0 {
		spec := n.inNodeSpec("kubelet", n.cfg.Kubelet, n.cfg.kubeletArgs()...)
		if n.supervised, err = proc.StartRestarting(spec, proc.Backoff{Initial: d, Max: d, Reset: d}, proc.RestartOptions{}); err != nil {
			return fmt.Errorf("node %s: kubelet service: %w", n.cfg.Name, err)
		}
	} else if n.kubelet, err = n.startInNode("kubelet", n.cfg.Kubelet, n.cfg.kubeletArgs()...); err != nil {
		return err
	}
	n.proxy, err = n.startInNode("kube-proxy", n.cfg.KubeProxy, n.cfg.kubeProxyArgs()...)
	return err
}

// checkBinaries names the missing program and the package or make target that provides it.
func (c *Config) checkBinaries() error {
	type need struct{ path, from string }
	bins := []need{{c.Kubelet, "make lab-binaries"}}
	if c.Kubeadm != nil {
		bins = append(bins, need{c.Kubeadm.Kubeadm, "make capi-binaries"}, need{c.Kubeadm.Crictl, "make capi-binaries"})
	} else {
		bins = append(bins, need{c.KubeProxy, "make lab-binaries"})
	}
	for _, b := range append(bins, []need{
		{c.Containerd, "apt-get install containerd"}, {c.Ctr, "apt-get install containerd"},
		{c.Runc, "apt-get install runc"}, {filepath.Join(c.CNIBinDir, "bridge"), "apt-get install containernetworking-plugins"},
		{"nsenter", "apt-get install util-linux"}, {"iptables", "apt-get install iptables"},
	}...) {
		if _, err := exec.LookPath(b.path); err != nil {
			return fmt.Errorf("node %s: %s is missing (%s): %w", c.Name, b.path, b.from, err)
		}
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("node %s: a node needs root (namespaces, cgroups, containers)", c.Name)
	}
	return nil
}

// WaitReady waits until the Node object reports Ready, failing early if the kubelet or containerd
// exits. cs is any client allowed to read nodes (the lab admin).
func (n *Node) WaitReady(ctx context.Context, cs kubernetes.Interface) error {
	for {
		for _, p := range []*proc.Proc{n.currentKubelet(), n.containerd} {
			if p == n.currentKubelet() && n.supervised != nil {
				continue // the supervisor restarts it
			}
			if done, err := p.Exited(); done {
				return fmt.Errorf("node %s: %s exited (%v):\n%s", n.cfg.Name, p.Name, err, proc.Tail(p.LogFile, 25))
			}
		}
		if no, err := cs.CoreV1().Nodes().Get(ctx, n.cfg.Name, metav1.GetOptions{}); err == nil {
			for _, cond := range no.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s not Ready: %w; last lines of the kubelet log:\n%s", n.cfg.Name, ctx.Err(), proc.Tail(n.cfg.logFile("kubelet"), 25))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Name is the node's name.
func (n *Node) Name() string { return n.cfg.Name }

// IP is the node's address (its InternalIP).
func (n *Node) IP() netip.Addr { return n.cfg.Host.IP }

// Dir is the node's directory.
func (n *Node) Dir() string { return n.cfg.Dir }

// LogFile is the log of "containerd", "kubelet", "kube-proxy" or "holder".
func (n *Node) LogFile(component string) string { return n.cfg.logFile(component) }

// PodLogsDir is where containerd writes the pods' container logs (the kubelet's podLogsDir; on a
// kubeadm host its default, /var/log/pods in the node).
func (n *Node) PodLogsDir() string {
	if n.cfg.Kubeadm != nil {
		return filepath.Join(n.cfg.hostDir("/var/log"), "pods")
	}
	return n.cfg.podLogsDir()
}

// KubeletRoot is the kubelet's --root-dir. The volumes under it (projected tokens) are mounts of
// the node's mount namespace: read them through NodePath.
func (n *Node) KubeletRoot() string {
	if n.cfg.Kubeadm != nil {
		return filepath.Join(n.cfg.hostDir("/var/lib"), "kubelet")
	}
	return n.cfg.kubeletRoot()
}

// currentKubelet is the kubelet process running now (a kubeadm host's: the supervisor's current
// one), or nil.
func (n *Node) currentKubelet() *proc.Proc {
	if n.supervised != nil {
		return n.supervised.Current()
	}
	return n.kubelet
}

// NodePath is p as the node's processes see it (through the holder's /proc/PID/root), or "" once
// stopped.
func (n *Node) NodePath(p string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.holder == nil || n.stopped {
		return ""
	}
	return "/proc/" + strconv.Itoa(n.holder.PID()) + "/root" + p
}

// PIDs returns the process ids of the node's own processes by name (containerd, kubelet,
// kube-proxy), for resource figures.
func (n *Node) PIDs() map[string]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string]int{}
	for _, p := range []*proc.Proc{n.containerd, n.currentKubelet(), n.proxy} {
		if p != nil {
			out[p.Name] = p.PID()
		}
	}
	return out
}

func (n *Node) logf(format string, args ...any) { fmt.Fprintf(n.cfg.Log, format+"\n", args...) }
