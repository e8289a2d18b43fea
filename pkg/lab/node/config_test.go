// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab/hostnet"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func fakeIssue(cn string, orgs []string, ips []net.IP, dns []string, server bool) ([]byte, []byte, error) {
	return []byte("CERT " + cn), []byte("KEY " + cn), nil
}

func testConfig() Config {
	return Config{
		Name:      "node-1",
		Dir:       "/lab/nodes/node-1",
		Host:      hostnet.Host{Name: "node-1", NetNS: "/run/netns/cw-node-1", IP: netip.MustParseAddr("10.200.7.21")},
		PodCIDR:   netip.MustParsePrefix("10.244.1.0/24"),
		APIServer: "https://10.200.7.1:6443",
		CAPEM:     []byte("CA"),
		Issue:     fakeIssue,
		Kubelet:   "/bin/kubelet", KubeProxy: "/bin/kube-proxy",
	}
}

func TestConfigComplete(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		errSub string
	}{
		{"ok", func(*Config) {}, ""},
		{"bad name", func(c *Config) { c.Name = "Node_1" }, "DNS label"},
		{"no dir", func(c *Config) { c.Dir = "" }, "directory is not set"},
		{"dir under /run", func(c *Config) { c.Dir = "/run/lab/node-1" }, "is under /run"},
		{"dir under /var/lib", func(c *Config) { c.Dir = "/var/lib/credwatch/n" }, "is under /var/lib"},
		{"dir with quote", func(c *Config) { c.Dir = "/tmp/it's" }, "quotes"},
		{"loopback ip", func(c *Config) { c.Host.IP = netip.MustParseAddr("127.0.0.5") }, "non-loopback"},
		{"no netns", func(c *Config) { c.Host.NetNS = "" }, "network namespace"},
		{"pod cidr not masked", func(c *Config) { c.PodCIDR = netip.MustParsePrefix("10.244.1.7/24") }, "pod CIDR"},
		{"pod cidr too small", func(c *Config) { c.PodCIDR = netip.MustParsePrefix("10.244.1.0/30") }, "pod CIDR"},
		{"pod cidr outside cluster", func(c *Config) { c.ClusterCIDR = netip.MustParsePrefix("10.245.0.0/16") }, "outside the cluster CIDR"},
		{"http api", func(c *Config) { c.APIServer = "http://10.200.7.1:6443" }, "https URL"},
		{"no issuer", func(c *Config) { c.Issue = nil }, "issuer"},
		{"no kubelet", func(c *Config) { c.Kubelet = "" }, "binaries"},
		{"cgroup root /", func(c *Config) { c.CgroupRoot = "/" }, "cgroup root"},
		{"registry without port", func(c *Config) { c.Registries = map[string]string{"127.0.0.1": "http://10.200.7.1:5000"} }, "want host:port"},
		{"registry over https", func(c *Config) { c.Registries = map[string]string{"127.0.0.1:5000": "https://10.200.7.1:5000"} }, "want http://"},
		{"registry server with path", func(c *Config) { c.Registries = map[string]string{"127.0.0.1:5000": "http://10.200.7.1:5000/v2"} }, "want http://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig()
			tc.mutate(&c)
			err := c.complete()
			if tc.errSub == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.Containerd != DefaultContainerd || c.SandboxImage != DefaultSandboxImage || !strings.HasPrefix(c.CgroupRoot, "/credwatch-node-1-") {
					t.Errorf("defaults not filled: %+v", c)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Errorf("complete() = %v, want an error containing %q", err, tc.errSub)
			}
		})
	}
}

func TestCgroupRootDiffersPerDirectory(t *testing.T) {
	if defaultCgroupRoot("node-1", "/a") == defaultCgroupRoot("node-1", "/b") {
		t.Error("two labs' node-1 share a cgroup root")
	}
}

// TestGenerated compares every generated file with its golden copy (go test -update rewrites them).
func TestGenerated(t *testing.T) {
	c := testConfig()
	c.ClusterCIDR = netip.MustParsePrefix("10.244.0.0/16")
	c.CgroupRoot = "/credwatch-node-1-test"
	if err := c.complete(); err != nil {
		t.Fatal(err)
	}
	kubelet, err := c.kubeletConfig()
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := c.kubeProxyConfig()
	if err != nil {
		t.Fatal(err)
	}
	cni, err := c.cniConflist()
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{
		"containerd.toml": []byte(c.containerdConfig()),
		"kubelet.yaml":    kubelet,
		"kube-proxy.yaml": proxy,
		"cni.conflist":    cni,
		"holder.sh":       []byte(c.holderScript()),
		"kubelet.args":    []byte(strings.Join(c.kubeletArgs(), "\n") + "\n"),
		"kube-proxy.args": []byte(strings.Join(c.kubeProxyArgs(), "\n") + "\n"),
		"hosts.toml":      []byte(hostsTOML("http://10.200.7.1:5000")),
	} {
		golden := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (go test -update):\n%s", name, golden, got)
		}
	}
}

// TestConfigsDecodeStrictly decodes the generated configurations into the kubelet's and
// kube-proxy's real types, rejecting unknown fields (a misspelt key would be ignored silently).
func TestConfigsDecodeStrictly(t *testing.T) {
	c := testConfig()
	if err := c.complete(); err != nil {
		t.Fatal(err)
	}
	kubelet, err := c.kubeletConfig()
	if err != nil {
		t.Fatal(err)
	}
	var kc kubeletv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict(kubelet, &kc); err != nil {
		t.Fatalf("kubelet configuration: %v", err)
	}
	if kc.FailCgroupV1 == nil || *kc.FailCgroupV1 || kc.PodLogsDir != c.podLogsDir() || kc.CgroupRoot != c.CgroupRoot {
		t.Errorf("kubelet configuration decoded wrong: failCgroupV1=%v podLogsDir=%q cgroupRoot=%q", kc.FailCgroupV1, kc.PodLogsDir, kc.CgroupRoot)
	}
	proxy, err := c.kubeProxyConfig()
	if err != nil {
		t.Fatal(err)
	}
	var pc kubeproxyv1alpha1.KubeProxyConfiguration
	if err := yaml.UnmarshalStrict(proxy, &pc); err != nil {
		t.Fatalf("kube-proxy configuration: %v", err)
	}
	ct := pc.Conntrack
	if ct.MaxPerCore == nil || *ct.MaxPerCore != 0 || ct.Min == nil || *ct.Min != 0 ||
		ct.TCPEstablishedTimeout == nil || ct.TCPEstablishedTimeout.Duration != 0 || ct.TCPCloseWaitTimeout == nil {
		t.Errorf("kube-proxy conntrack settings would touch the kernel: %+v", ct)
	}
	if pc.IPTables.LocalhostNodePorts == nil || *pc.IPTables.LocalhostNodePorts || pc.Mode != "iptables" {
		t.Errorf("kube-proxy iptables settings: mode %q, localhostNodePorts %v", pc.Mode, pc.IPTables.LocalhostNodePorts)
	}
}

func TestMountFields(t *testing.T) {
	for _, tc := range []struct{ line, mp, fs string }{
		{"36 25 0:32 / /sys/fs/cgroup/memory rw,relatime shared:15 - cgroup cgroup rw,memory", "/sys/fs/cgroup/memory", "cgroup"},
		{"40 25 0:36 / /tmp/a\\040b rw - tmpfs tmpfs rw", "/tmp/a b", "tmpfs"},
		{"garbage", "", ""},
	} {
		mp, fs, _ := mountFields(tc.line)
		if mp != tc.mp || fs != tc.fs {
			t.Errorf("mountFields(%q) = %q, %q; want %q, %q", tc.line, mp, fs, tc.mp, tc.fs)
		}
	}
}

func TestAPIServerArgs(t *testing.T) {
	dir := t.TempDir()
	args, err := APIServerArgs(dir, "/lab/pki/ca.crt", fakeIssue)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(args, " ")
	for _, want := range []string{"--kubelet-client-certificate=" + dir, "--kubelet-certificate-authority=/lab/pki/ca.crt",
		"--kubelet-preferred-address-types=InternalIP", "--enable-admission-plugins=NodeRestriction"} {
		if !strings.Contains(joined, want) {
			t.Errorf("args %q lack %q", joined, want)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "apiserver-kubelet-client.crt")); string(data) != "CERT "+APIServerKubeletClientCN {
		t.Errorf("certificate file holds %q", data)
	}
}

func TestRecordedMountNS(t *testing.T) {
	self := os.Getpid()
	start := startTime(self)
	if start == "" || startTime(1<<30) != "" {
		t.Fatalf("startTime(self) = %q, startTime(no such pid) = %q", start, startTime(1<<30))
	}
	for _, tc := range []struct {
		name, rec, want string
	}{
		{"alive", fmt.Sprintf("%d %s mnt:[4026531841]\n", self, start), "mnt:[4026531841]"},
		{"pid reused", fmt.Sprintf("%d 1 mnt:[4026531841]\n", self), ""},
		{"garbage", "x", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "holder"), []byte(tc.rec), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := recordedMountNS(dir); got != tc.want {
				t.Errorf("recordedMountNS = %q, want %q", got, tc.want)
			}
		})
	}
	if got := recordedMountNS(t.TempDir()); got != "" {
		t.Errorf("recordedMountNS with no record = %q", got)
	}
}

func TestPodCIDRFor(t *testing.T) {
	p, err := PodCIDRFor(3)
	if err != nil || p.String() != "10.244.3.0/24" || !ClusterCIDR.Contains(p.Addr()) {
		t.Errorf("PodCIDRFor(3) = %s, %v", p, err)
	}
	for _, i := range []int{0, 255} {
		if _, err := PodCIDRFor(i); err == nil {
			t.Errorf("PodCIDRFor(%d) succeeded", i)
		}
	}
}
