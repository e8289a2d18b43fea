// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package hostnet gives the lab real network hosts: one network namespace per host, each joined
// by a veth pair to a bridge that lives in the lab's own namespace, and one veth from the machine
// into that bridge so that processes on the machine (credwatch, the tests, the load balancer)
// reach every host directly. The kernel here has no dummy interface driver, and a kubelet rejects a
// loopback node IP, so veths it is.
//
// Processes are started in a host with nsenter --net (not `ip netns exec`, which remounts /sys and
// hides the cgroup tree). Partitions are iptables rules inside the host's own namespace, so
// nothing is ever written to the machine's firewall.
package hostnet

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
)

// Config describes a lab network.
type Config struct {
	// Prefix names every namespace and the machine-side veth (at most 8 characters), e.g. "cw37".
	Prefix string
	// Subnet is the lab network, a /24 whose .1 is the machine's address on it.
	Subnet netip.Prefix
}

// Host is one network host of the lab.
type Host struct {
	Name  string     `json:"name"`
	NetNS string     `json:"netns"` // /run/netns/<namespace>
	IP    netip.Addr `json:"ip"`
}

// Command runs bin with args inside the host's network namespace.
func (h Host) Command(bin string, args ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"--net=" + h.NetNS, "--", bin}, args...)...)
}

// Network is a running lab network. Its methods are safe for concurrent use.
type Network struct {
	cfg   Config
	gw    netip.Addr
	mu    sync.Mutex
	hosts map[string]Host
}

// Create makes the lab's bridge namespace and the machine's veth into it. On failure it removes
// what it made.
func Create(ctx context.Context, cfg Config) (*Network, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("lab network: network namespaces need root (run as root, or use the loopback network)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("lab network: the ip command (Debian package iproute2) is missing: %w", err)
	}
	if _, err := exec.LookPath("nsenter"); err != nil {
		return nil, fmt.Errorf("lab network: nsenter (Debian package util-linux) is missing: %w", err)
	}
	n := &Network{cfg: cfg, gw: cfg.Subnet.Addr().Next(), hosts: map[string]Host{}}
	if nsExists(n.lanNS()) {
		return nil, fmt.Errorf("lab network %s: namespace %s already exists (another lab, or a leftover: credwatch lab down --dir ...)", cfg.Prefix, n.lanNS())
	}
	lan, veth := n.lanNS(), n.machineVeth()
	bits := fmt.Sprintf("/%d", cfg.Subnet.Bits())
	steps := [][]string{
		{"netns", "add", lan},
		{"-n", lan, "link", "set", "lo", "up"},
		{"-n", lan, "link", "add", "br0", "type", "bridge"},
		{"-n", lan, "link", "set", "br0", "up"},
		{"link", "add", veth, "type", "veth", "peer", "name", "up0", "netns", lan},
		{"-n", lan, "link", "set", "up0", "master", "br0", "up"},
		{"addr", "add", n.gw.String() + bits, "dev", veth},
		{"link", "set", veth, "up"},
	}
	for _, s := range steps {
		if err := ip(ctx, s...); err != nil {
			_ = n.Destroy(context.Background())
			return nil, fmt.Errorf("lab network %s: %w", cfg.Prefix, err)
		}
	}
	return n, nil
}

func (c Config) validate() error {
	if c.Prefix == "" || len(c.Prefix) > 8 || strings.ContainsAny(c.Prefix, " /") {
		return fmt.Errorf("lab network prefix %q: want 1-8 characters without spaces or slashes", c.Prefix)
	}
	if !c.Subnet.IsValid() || !c.Subnet.Addr().Is4() || c.Subnet.Bits() != 24 || c.Subnet.Masked() != c.Subnet {
		return fmt.Errorf("lab network subnet %s: want an IPv4 /24 network address", c.Subnet)
	}
	return nil
}

// Gateway is the machine's own address on the lab network.
func (n *Network) Gateway() netip.Addr { return n.gw }

// Subnet is the lab network.
func (n *Network) Subnet() netip.Prefix { return n.cfg.Subnet }

// Prefix is the name prefix of every namespace the network made.
func (n *Network) Prefix() string { return n.cfg.Prefix }

// Host returns a host added earlier.
func (n *Network) Host(name string) (Host, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	h, ok := n.hosts[name]
	return h, ok
}

// Hosts lists the hosts, by name.
func (n *Network) Hosts() []Host {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]Host, 0, len(n.hosts))
	for _, h := range n.hosts {
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b Host) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// AddHost creates host name with address addr (inside the subnet), or returns it if it exists.
func (n *Network) AddHost(ctx context.Context, name string, addr netip.Addr) (Host, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if h, ok := n.hosts[name]; ok {
		return h, nil
	}
	if !n.cfg.Subnet.Contains(addr) || addr == n.gw || addr == n.cfg.Subnet.Addr() {
		return Host{}, fmt.Errorf("lab host %s: address %s is not a host address of %s", name, addr, n.cfg.Subnet)
	}
	ns := n.cfg.Prefix + "-" + name
	port := fmt.Sprintf("h%d", addr.As4()[3]) // unique within the bridge namespace
	bits := fmt.Sprintf("/%d", n.cfg.Subnet.Bits())
	steps := [][]string{
		{"netns", "add", ns},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "link", "add", "eth0", "address", vmMAC(addr), "type", "veth", "peer", "name", port, "netns", n.lanNS()},
		{"-n", n.lanNS(), "link", "set", port, "master", "br0", "up"},
		{"-n", ns, "addr", "add", addr.String() + bits, "dev", "eth0"},
		{"-n", ns, "link", "set", "eth0", "up"},
		{"-n", ns, "route", "add", "default", "via", n.gw.String()},
	}
	for _, s := range steps {
		if err := ip(ctx, s...); err != nil {
			_ = ip(context.Background(), "netns", "del", ns)
			return Host{}, fmt.Errorf("lab host %s: %w", name, err)
		}
	}
	h := Host{Name: name, NetNS: "/run/netns/" + ns, IP: addr}
	n.hosts[name] = h
	return h, nil
}

// RemoveHost deletes host name's namespace (and with it its veth); the host's processes must
// already be stopped. A host that does not exist is not an error.
func (n *Network) RemoveHost(ctx context.Context, name string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	h, ok := n.hosts[name]
	if !ok {
		return nil
	}
	if nsExists(nsName(h)) {
		if err := ip(ctx, "netns", "del", nsName(h)); err != nil {
			return fmt.Errorf("lab host %s: %w", name, err)
		}
	}
	delete(n.hosts, name)
	return nil
}

// vmMAC is a host's MAC address: in VMware's OUI 00:50:56, like a vSphere VM's NIC (the in-tree
// vSphere provider reports only addresses of such NICs as the node's), then the address' last
// three bytes.
func vmMAC(addr netip.Addr) string {
	b := addr.As4()
	return fmt.Sprintf("00:50:56:%02x:%02x:%02x", b[1], b[2], b[3])
}

// Route adds a route inside host name: dst via gw (pod networks behind a node).
func (n *Network) Route(ctx context.Context, name string, dst netip.Prefix, via netip.Addr) error {
	h, ok := n.Host(name)
	if !ok {
		return fmt.Errorf("lab host %s: no such host", name)
	}
	return ip(ctx, "-n", nsName(h), "route", "replace", dst.String(), "via", via.String())
}

// Destroy removes every namespace whose name starts with the prefix and the machine's veth. It
// may be called more than once; processes inside the namespaces must already be stopped.
func (n *Network) Destroy(ctx context.Context) error {
	n.mu.Lock()
	n.hosts = map[string]Host{}
	n.mu.Unlock()
	return Cleanup(ctx, n.cfg.Prefix)
}

// Cleanup removes every namespace named <prefix>-* and the veth <prefix>-lan (for a lab whose
// owner died). Missing ones are not an error.
func Cleanup(ctx context.Context, prefix string) error {
	if prefix == "" {
		return nil
	}
	var errs []string
	_ = ip(ctx, "link", "del", prefix+"-lan") // deletes the peer in the bridge namespace too
	out, err := exec.CommandContext(ctx, "ip", "netns", "list").Output()
	if err != nil {
		return fmt.Errorf("list network namespaces: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], prefix+"-") {
			continue
		}
		if err := ip(ctx, "netns", "del", f[0]); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("lab network %s: %s", prefix, strings.Join(errs, "; "))
	}
	return nil
}

func (n *Network) lanNS() string       { return n.cfg.Prefix + "-lan" }
func (n *Network) machineVeth() string { return n.cfg.Prefix + "-lan" }

func nsName(h Host) string { return strings.TrimPrefix(h.NetNS, "/run/netns/") }

// InUse says whether the lab network of prefix exists (its bridge namespace): a lab that is
// still tearing it down, or a leftover, whose loopback reservation may already be gone.
func InUse(prefix string) bool { return nsExists(prefix + "-lan") }

func nsExists(name string) bool {
	_, err := os.Stat("/run/netns/" + name)
	return err == nil
}

// ip runs the ip command; its error carries the command and its stderr.
func ip(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "ip", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
