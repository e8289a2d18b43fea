// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/credwatch/credwatch/pkg/lab/hostnet"
)

// NetworkMode says where the lab's processes live.
type NetworkMode string

const (
	// NetworkHosts puts every control-plane member (its apiserver and etcd member) in its own
	// network namespace with an address on the lab network 10.200.x.0/24, so members appear in
	// the kubernetes EndpointSlice and faults are real network faults. Needs root.
	NetworkHosts NetworkMode = "hosts"
	// NetworkLoopback runs everything on 127.0.x.y addresses of the machine (no root needed, but
	// members cannot appear in EndpointSlices and the lab cannot have nodes).
	NetworkLoopback NetworkMode = "loopback"
)

// ValidateNetworkMode reports whether m is a known network mode.
func ValidateNetworkMode(m NetworkMode) error {
	switch m {
	case NetworkHosts, NetworkLoopback:
		return nil
	}
	return fmt.Errorf("unknown lab network %q (want %q or %q)", m, NetworkHosts, NetworkLoopback)
}

// networkPrefix names the namespaces of the lab whose loopback octet is x.
func networkPrefix(x int) string { return fmt.Sprintf("cw%d", x) }

// networkSubnet is the lab network of the lab whose loopback octet is x.
func networkSubnet(x int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 200, byte(x), 0}), 24)
}

// controlPlaneHost is the name of the host that runs apiserver-n and etcd-n.
func controlPlaneHost(n int) string { return fmt.Sprintf("cp-%d", n) }

// hostAddr is the lab-network address of control-plane host n (10.200.x.10+n).
func (l *Lab) hostAddr(n int) string {
	return netip.AddrFrom4([4]byte{10, 200, byte(l.x), byte(10 + n%180)}).String()
}

// openNetwork creates the lab network (hosts mode) and the load balancer's listener on the
// machine's address on it. The loopback reservation stays open so concurrent labs pick other x.
func (l *Lab) openNetwork(ctx context.Context) (net.Listener, error) {
	n, err := hostnet.Create(ctx, hostnet.Config{Prefix: networkPrefix(l.x), Subnet: networkSubnet(l.x)})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(n.Gateway().String(), "6443"))
	if err != nil {
		_ = n.Destroy(context.Background())
		return nil, fmt.Errorf("load balancer on the lab network: %w", err)
	}
	l.hosts = n
	return ln, nil
}

// placeOn makes sure control-plane host n exists and returns its address and network namespace
// ("" on the loopback network).
func (l *Lab) placeOn(ctx context.Context, n int, loopbackIP string) (ip, netns string, err error) {
	if l.hosts == nil {
		return loopbackIP, "", nil
	}
	addr := netip.MustParseAddr(l.hostAddr(n))
	_, existed := l.hosts.Host(controlPlaneHost(n)) // apiserver-n and etcd-n share the host
	h, err := l.hosts.AddHost(ctx, controlPlaneHost(n), addr)
	if err != nil {
		return "", "", err
	}
	if !existed {
		if err := l.routePods(ctx); err != nil { // a new host needs routes to the nodes' pods
			return "", "", err
		}
	}
	return h.IP.String(), h.NetNS, nil
}

// memberNumber is n of "apiserver-n" or "etcd-n".
func memberNumber(name string) int {
	var n int
	if i := strings.LastIndexByte(name, '-'); i >= 0 {
		_, _ = fmt.Sscanf(name[i+1:], "%d", &n)
	}
	return n
}

// lbIP is the address clients use for the load balancer (a SAN of every serving certificate).
func (l *Lab) lbIP() string {
	if l.hosts != nil {
		return l.hosts.Gateway().String()
	}
	return fmt.Sprintf("127.0.%d.1", l.x)
}

// controllerIP is where the controller manager (and scheduler) bind on the machine.
func (l *Lab) controllerIP() string {
	if l.hosts != nil {
		return l.hosts.Gateway().String()
	}
	return fmt.Sprintf("127.0.%d.2", l.x)
}

// Network is the lab network (nil on the loopback network).
func (l *Lab) Network() *hostnet.Network { return l.hosts }

func (l *Lab) closeNetwork(ctx context.Context) error {
	if l.reservation != nil {
		_ = l.reservation.Close()
	}
	if l.hosts == nil {
		return nil
	}
	return l.hosts.Destroy(ctx)
}
