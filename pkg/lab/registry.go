// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
)

// validateRegistries checks Options.Registries: host:port of a registry on this machine's loopback.
func validateRegistries(regs []string) error {
	for _, r := range regs {
		host, port, err := net.SplitHostPort(r)
		if err != nil {
			return fmt.Errorf("registry %q: want host:port: %w", r, err)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return fmt.Errorf("registry %q: port %q: want 1..65535", r, port)
		}
		if a, err := netip.ParseAddr(host); host != "localhost" && (err != nil || !a.IsLoopback()) {
			return fmt.Errorf("registry %q: want a registry on this machine's loopback (127.0.0.1:PORT or localhost:PORT)", r)
		}
	}
	return nil
}

// openRegistries forwards the same port on the lab network's gateway (another if taken) to each
// registry of Options.Registries, and returns what the nodes' containerd is told: registry host →
// http URL of its forwarder. The forwarders are the load balancer's TCP passthrough with one
// backend; Down closes them after the nodes.
func (l *Lab) openRegistries() (map[string]string, error) {
	if len(l.o.Registries) == 0 {
		return nil, nil
	}
	if l.hosts == nil {
		return nil, fmt.Errorf("registries are for nodes, which need the hosts network")
	}
	gw := l.hosts.Gateway().String()
	out := map[string]string{}
	for _, r := range l.o.Registries {
		_, port, _ := net.SplitHostPort(r)
		ln, err := net.Listen("tcp", net.JoinHostPort(gw, port))
		if err != nil {
			if ln, err = net.Listen("tcp", net.JoinHostPort(gw, "0")); err != nil {
				return nil, fmt.Errorf("registry %s: forwarder on the lab network: %w", r, err)
			}
		}
		fw := lb.New(ln, lb.Config{Mode: lb.All})
		fw.Add("registry", r, true)
		l.mu.Lock()
		l.registryFwds = append(l.registryFwds, fw)
		l.mu.Unlock()
		out[r] = "http://" + ln.Addr().String()
		l.logf("lab: registry %s reachable from the nodes at %s", r, ln.Addr())
	}
	return out, nil
}

// closeRegistries closes the registry forwarders.
func (l *Lab) closeRegistries() {
	l.mu.Lock()
	fws := l.registryFwds
	l.registryFwds = nil
	l.mu.Unlock()
	for _, fw := range fws {
		fw.Close()
	}
}
