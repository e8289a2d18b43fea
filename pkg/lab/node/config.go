// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node

import (
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/hostnet"
)

// IssueFunc signs a leaf certificate with the cluster CA: client certificates carry orgs, serving
// certificates (server true) carry the IP and DNS SANs. It has the shape of the lab CA's issue.
type IssueFunc func(cn string, orgs []string, ips []net.IP, dns []string, server bool) (certPEM, keyPEM []byte, err error)

// Defaults for Config's optional fields: Debian's containerd, runc and CNI plugins.
const (
	DefaultContainerd   = "/usr/bin/containerd"
	DefaultCtr          = "/usr/bin/ctr"
	DefaultRunc         = "/usr/sbin/runc"
	DefaultCNIBinDir    = "/usr/lib/cni"
	DefaultSandboxImage = "registry.k8s.io/pause:3.10"
	DefaultStopGrace    = 10 * time.Second
)

// ClusterCIDR is the lab's pod network: node i (from 1) gets PodCIDRFor(i). Pods reach pods on
// another node through a route to that node's pod CIDR via its address (hostnet.Network.Route in
// every other node).
var ClusterCIDR = netip.MustParsePrefix("10.244.0.0/16")

// PodCIDRFor is node i's pod subnet inside ClusterCIDR: 10.244.i.0/24 (i in 1..254).
func PodCIDRFor(i int) (netip.Prefix, error) {
	if i < 1 || i > 254 {
		return netip.Prefix{}, fmt.Errorf("node number %d: want 1..254", i)
	}
	a := ClusterCIDR.Addr().As4()
	a[2] = byte(i)
	return netip.PrefixFrom(netip.AddrFrom4(a), 24), nil
}

// Config describes one worker node.
type Config struct {
	// Name is the node's name (its Node object, the kubelet's hostname-override), e.g. "node-1".
	Name string
	// Dir is the node's own directory; Start empties it. It must not be under /run, /var/lib or
	// /var/log, which the node's mount namespace replaces.
	Dir string
	// Host is the network namespace the node runs in and its address there.
	Host hostnet.Host
	// PodCIDR is this node's pod subnet (the CNI bridge's host-local range), e.g. 10.244.1.0/24.
	PodCIDR netip.Prefix
	// ClusterCIDR is every node's pods together (kube-proxy's local-traffic detection); optional.
	ClusterCIDR netip.Prefix

	// APIServer is the https URL of the API (the lab load balancer) as seen from inside Host.
	APIServer string
	// APIServerName is the TLS server name to verify when the URL's host is not in the serving
	// certificate (for example "kubernetes" behind a forwarder); optional.
	APIServerName string
	// CAPEM is the cluster CA: it signed the apiservers' serving certificates and the apiservers'
	// kubelet client certificate, and Issue signs with it.
	CAPEM []byte
	// Issue signs the node's certificates (kubelet client and serving, kube-proxy client).
	Issue IssueFunc

	// Kubelet and KubeProxy are the binaries, same version line as the apiservers.
	Kubelet, KubeProxy string
	// KubeletArgs are appended to the kubelet's flags (e.g. --cloud-provider, --cloud-config).
	KubeletArgs []string
	// KubeletRestart, when set, runs the kubelet as systemd runs kubelet.service (Restart=always):
	// started again this long after it exits (RestartSec; kubeadm's and kubespray's units: 10 s).
	// Without it a kubelet that exits stays down.
	KubeletRestart time.Duration
	// Containerd, Ctr, Runc and CNIBinDir default to Debian's (the Default* constants).
	Containerd, Ctr, Runc, CNIBinDir string
	// SandboxImage is containerd's pause image; one of Images must carry that tag.
	SandboxImage string
	// Images are image tarballs (docker save or OCI layout) imported into containerd's k8s.io
	// namespace before the kubelet starts.
	Images []string
	// Registries maps a registry host, as image references name it (host:port), to the plain-http
	// URL the node's containerd pulls it from, e.g. "127.0.0.1:5000" → "http://10.200.7.1:5000":
	// one hosts.toml each under the node's containerd/certs.d (containerd's config_path), removed
	// with the node directory.
	Registries map[string]string
	// CgroupRoot is the kubelet's cgroup root, e.g. "/credwatch-node-1-1a2b3c4d"; default derived
	// from Name and Dir so that two labs never share one.
	CgroupRoot string
	// StopGrace is how long Stop waits between SIGTERM and SIGKILL; default DefaultStopGrace.
	StopGrace time.Duration
	// Log receives progress lines; default io.Discard.
	Log io.Writer

	// Kubeadm, when set, makes the node a kubeadm host (see Kubeadm): kubeadm configures the
	// kubelet, so APIServer, CAPEM, Issue, KubeProxy and ClusterCIDR are not used.
	Kubeadm *Kubeadm
}

// MaxNameLen is the longest node name, a lower-case DNS label (the default cgroup root is
// named after it).
const MaxNameLen = 42

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$`)

// ValidName reports whether name is a valid Config.Name.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// hiddenDirs are replaced by directories of the node inside its mount namespace.
var hiddenDirs = []string{"/run", "/var/lib", "/var/log"}

// complete fills defaults and validates.
func (c *Config) complete() error {
	if !ValidName(c.Name) {
		return fmt.Errorf("node name %q: want a lower-case DNS label of at most %d characters", c.Name, MaxNameLen)
	}
	if c.Dir == "" {
		return fmt.Errorf("node %s: directory is not set", c.Name)
	}
	abs, err := filepath.Abs(c.Dir)
	if err != nil {
		return fmt.Errorf("node %s: directory %q: %w", c.Name, c.Dir, err)
	}
	c.Dir = abs
	for _, h := range c.hidden() {
		if c.Dir == h || strings.HasPrefix(c.Dir, h+"/") {
			return fmt.Errorf("node %s: directory %s is under %s, which the node's mount namespace replaces; use another lab directory", c.Name, c.Dir, h)
		}
	}
	if strings.ContainsAny(c.Dir, "'\n\" ") {
		return fmt.Errorf("node %s: directory %q must not contain quotes, spaces or newlines", c.Name, c.Dir)
	}
	if c.Host.NetNS == "" || !c.Host.IP.Is4() || c.Host.IP.IsLoopback() {
		return fmt.Errorf("node %s: want a network namespace and a non-loopback IPv4 address (got %q, %s)", c.Name, c.Host.NetNS, c.Host.IP)
	}
	if !c.PodCIDR.IsValid() || !c.PodCIDR.Addr().Is4() || c.PodCIDR.Masked() != c.PodCIDR || c.PodCIDR.Bits() > 28 {
		return fmt.Errorf("node %s: pod CIDR %s: want an IPv4 network of /28 or larger", c.Name, c.PodCIDR)
	}
	if c.ClusterCIDR.IsValid() && !c.ClusterCIDR.Contains(c.PodCIDR.Addr()) {
		return fmt.Errorf("node %s: pod CIDR %s is outside the cluster CIDR %s", c.Name, c.PodCIDR, c.ClusterCIDR)
	}
	if err := c.validateCluster(); err != nil {
		return err
	}
	if err := c.validateRegistries(); err != nil {
		return err
	}
	setDefault(&c.Containerd, DefaultContainerd)
	setDefault(&c.Ctr, DefaultCtr)
	setDefault(&c.Runc, DefaultRunc)
	setDefault(&c.CNIBinDir, DefaultCNIBinDir)
	setDefault(&c.SandboxImage, DefaultSandboxImage)
	setDefault(&c.CgroupRoot, defaultCgroupRoot(c.Name, c.Dir))
	if !strings.HasPrefix(c.CgroupRoot, "/") || c.CgroupRoot == "/" || strings.Contains(c.CgroupRoot, "..") {
		return fmt.Errorf("node %s: cgroup root %q: want an absolute path below /", c.Name, c.CgroupRoot)
	}
	if c.StopGrace <= 0 {
		c.StopGrace = DefaultStopGrace
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	return nil
}

// validateCluster checks what a worker node needs of the cluster, or what a kubeadm host needs.
func (c *Config) validateCluster() error {
	if k := c.Kubeadm; k != nil {
		if c.Kubelet == "" || k.Kubeadm == "" || k.Crictl == "" {
			return fmt.Errorf("node %s: a kubeadm host needs the kubelet, kubeadm and crictl binaries", c.Name)
		}
		return nil
	}
	u, err := url.Parse(c.APIServer)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("node %s: API server %q: want an https URL", c.Name, c.APIServer)
	}
	if len(c.CAPEM) == 0 || c.Issue == nil {
		return fmt.Errorf("node %s: the cluster CA and a certificate issuer are required", c.Name)
	}
	if c.Kubelet == "" || c.KubeProxy == "" {
		return fmt.Errorf("node %s: the kubelet and kube-proxy binaries are required", c.Name)
	}
	return nil
}

func setDefault(p *string, v string) {
	if *p == "" {
		*p = v
	}
}

// defaultCgroupRoot is /credwatch-NAME-HASH, HASH from the directory so concurrent labs differ.
func defaultCgroupRoot(name, dir string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(dir))
	return fmt.Sprintf("/credwatch-%s-%08x", name, h.Sum32())
}

// path is a file or directory of the node.
func (c *Config) path(elem ...string) string {
	return filepath.Join(append([]string{c.Dir}, elem...)...)
}

// Paths inside the node directory.
// socket is containerd's socket. A kubeadm host's is kubeadm's default path inside the node
// (every host's KubeadmConfigSpec names the same criSocket), reached from the machine only through
// the node (ctr runs inside it).
func (c *Config) socket() string {
	if c.Kubeadm != nil {
		return KubeadmCRISocket
	}
	return c.path("containerd", "containerd.sock")
}

// ttrpcSocket is containerd's ttrpc socket, next to socket.
func (c *Config) ttrpcSocket() string {
	if c.Kubeadm != nil {
		return KubeadmCRISocket + ".ttrpc"
	}
	return c.path("containerd", "containerd.ttrpc.sock")
}

func (c *Config) kubeletRoot() string     { return c.path("kubelet") }
func (c *Config) podLogsDir() string      { return c.path("pod-logs") }
func (c *Config) cniConfDir() string      { return c.path("cni", "net.d") }
func (c *Config) certsDir() string        { return c.path("containerd", "certs.d") }
func (c *Config) logFile(n string) string { return c.path("logs", n+".log") }
