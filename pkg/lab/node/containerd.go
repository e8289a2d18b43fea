// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// containerdConfig is containerd 1.6's config (version 2) with the recipe's CRI settings: root,
// state, socket and runc root under the node directory; restrict_oom_score_adj because the
// bounding set lacks CAP_SYS_RESOURCE; pod network namespaces under the state directory; no
// AppArmor profile loaded into the machine's kernel; the opt plugin's directory in the node;
// registry hosts from the node's certs.d (hostsTOML).
func (c *Config) containerdConfig() string {
	q := strconv.Quote
	return `version = 2
root = ` + q(c.path("containerd", "root")) + `
state = ` + q(c.path("containerd", "state")) + `
oom_score = 0
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = ` + q(c.socket()) + `

[ttrpc]
  address = ` + q(c.ttrpcSocket()) + `

[plugins."io.containerd.internal.v1.opt"]
  path = ` + q(c.path("containerd", "opt")) + `

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ` + q(c.SandboxImage) + `
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  enable_selinux = false
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = ` + q(c.Runc) + `
        Root = ` + q(c.path("runc")) + `

  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = ` + q(c.certsDir()) + `

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ` + q(c.CNIBinDir) + `
    conf_dir = ` + q(c.cniConfDir()) + `
    max_conf_num = 1
`
}

// validateRegistries checks Registries: host:port keys, http URLs with a host as values.
func (c *Config) validateRegistries() error {
	for host, server := range c.Registries {
		if _, _, err := net.SplitHostPort(host); err != nil || strings.ContainsAny(host, "/ ") {
			return fmt.Errorf("node %s: registry %q: want host:port", c.Name, host)
		}
		u, err := url.Parse(server)
		if err != nil || u.Scheme != "http" || u.Host == "" || strings.Trim(u.Path, "/") != "" {
			return fmt.Errorf("node %s: registry %s: server %q: want http://host:port", c.Name, host, server)
		}
	}
	return nil
}

// hostsTOML is containerd's registry host configuration for one registry pulled over plain http
// from server (certs.d/HOST/hosts.toml).
func hostsTOML(server string) string {
	q := strconv.Quote
	return `server = ` + q(server) + `

[host.` + q(server) + `]
  capabilities = ["pull", "resolve"]
`
}

// writeRegistries writes one hosts.toml per registry under the node's certs.d.
func (c *Config) writeRegistries() error {
	for host, server := range c.Registries {
		dir := filepath.Join(c.certsDir(), host)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("node %s: registry %s: %w", c.Name, host, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(hostsTOML(server)), 0o644); err != nil {
			return fmt.Errorf("node %s: registry %s: %w", c.Name, host, err)
		}
	}
	return nil
}

// cniConflist is the pod network: a bridge that is the pods' gateway and masquerades their
// traffic leaving the pod subnet (so the control plane sees the node's address), host-local
// addresses from the node's pod CIDR with their state in the node directory, and loopback.
// containerd reads it once at start (rewriting it while containerd runs hit a reload race).
func (c *Config) cniConflist() ([]byte, error) {
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "credwatch-lab",
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  [][]map[string]string{{{"subnet": c.PodCIDR.String()}}},
					"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
					"dataDir": c.path("cni", "ipam"),
				},
			},
			map[string]any{"type": "loopback"},
		},
	}
	data, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("node %s: CNI configuration: %w", c.Name, err)
	}
	return append(data, '\n'), nil
}

// startContainerd starts containerd in the node's namespaces and waits for its socket.
func (n *Node) startContainerd(ctx context.Context) error {
	p, err := n.startInNode("containerd", n.cfg.Containerd, "--config", n.cfg.path("containerd", "config.toml"))
	if err != nil {
		return err
	}
	n.containerd = p
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		if done, err := p.Exited(); done {
			return fmt.Errorf("node %s: containerd exited (%v):\n%s", n.cfg.Name, err, proc.Tail(p.LogFile, 20))
		}
		if n.cfg.Kubeadm != nil || dialable(n.cfg.socket()) {
			if n.ctr(ctx, "version") == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s: containerd not serving on %s: %w:\n%s", n.cfg.Name, n.cfg.socket(), ctx.Err(), proc.Tail(p.LogFile, 20))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// dialable reports whether a unix socket accepts connections.
func dialable(socket string) bool {
	c, err := net.DialTimeout("unix", socket, time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// importImages imports every image tarball into containerd's k8s.io namespace.
func (n *Node) importImages(ctx context.Context) error {
	for _, img := range n.cfg.Images {
		if err := n.ctr(ctx, "images", "import", img); err != nil {
			return fmt.Errorf("node %s: import image %s: %w", n.cfg.Name, img, err)
		}
	}
	return nil
}

// ctr runs ctr against the node's containerd in its k8s.io namespace (from the machine: only the
// socket is needed).
func (n *Node) ctr(ctx context.Context, args ...string) error {
	args = append([]string{"-a", n.cfg.socket(), "-n", "k8s.io"}, args...)
	cmd := exec.CommandContext(ctx, n.cfg.Ctr, args...)
	if n.cfg.Kubeadm != nil { // the socket's path is the node's
		cmd = exec.CommandContext(ctx, "nsenter", append(n.nsenterArgs(n.cfg.Ctr), args...)...)
	}
	cmd.Env = append(os.Environ(), "TMPDIR="+n.cfg.path("tmp"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
