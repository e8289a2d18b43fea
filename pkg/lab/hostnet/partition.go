// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package hostnet

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
)

// Block drops traffic between a host and Peer, in both directions, except for the addresses in
// Except. With Ports set, only TCP traffic to or from those ports is dropped. Traffic on the
// host's own loopback (a stacked etcd talking to its apiserver) is never dropped.
type Block struct {
	Peer   netip.Prefix
	Except []netip.Addr
	Ports  []uint16
}

// chain is the iptables chain, inside the host's namespace, that holds the partition rules.
const chain = "CREDWATCH-PARTITION"

// Partition adds blocks to host name's firewall (its own namespace's iptables).
func (n *Network) Partition(ctx context.Context, name string, blocks ...Block) error {
	h, ok := n.Host(name)
	if !ok {
		return fmt.Errorf("partition %s: no such lab host", name)
	}
	if err := ensureChain(ctx, h); err != nil {
		return fmt.Errorf("partition %s: %w", name, err)
	}
	for _, b := range blocks {
		for _, rule := range b.rules() {
			if err := iptables(ctx, h, append([]string{"-A", chain}, rule...)...); err != nil {
				return fmt.Errorf("partition %s: %w", name, err)
			}
		}
	}
	return nil
}

// Heal removes every partition rule of host name.
func (n *Network) Heal(ctx context.Context, name string) error {
	h, ok := n.Host(name)
	if !ok {
		return fmt.Errorf("heal %s: no such lab host", name)
	}
	if err := ensureChain(ctx, h); err != nil {
		return fmt.Errorf("heal %s: %w", name, err)
	}
	if err := iptables(ctx, h, "-F", chain); err != nil {
		return fmt.Errorf("heal %s: %w", name, err)
	}
	for _, dir := range []string{"-i", "-o"} {
		if err := iptables(ctx, h, "-A", chain, dir, "lo", "-j", "RETURN"); err != nil {
			return fmt.Errorf("heal %s: %w", name, err)
		}
	}
	return nil
}

// Partitioned reports how many drop rules host name has.
func (n *Network) Partitioned(ctx context.Context, name string) (int, error) {
	h, ok := n.Host(name)
	if !ok {
		return 0, fmt.Errorf("lab host %s: no such host", name)
	}
	out, err := h.Command("iptables", "-w", "-S", chain).Output()
	if err != nil {
		return 0, nil // no chain: never partitioned
	}
	return strings.Count(string(out), "-j DROP"), nil
}

func (b Block) rules() [][]string {
	var pre [][]string
	for _, e := range b.Except {
		pre = append(pre, []string{"-s", e.String(), "-j", "RETURN"}, []string{"-d", e.String(), "-j", "RETURN"})
	}
	peer := b.Peer.String()
	if len(b.Ports) == 0 {
		return append(pre, []string{"-s", peer, "-j", "DROP"}, []string{"-d", peer, "-j", "DROP"})
	}
	var ports []string
	for _, p := range b.Ports {
		ports = append(ports, strconv.Itoa(int(p)))
	}
	pl := strings.Join(ports, ",")
	return append(pre,
		[]string{"-s", peer, "-p", "tcp", "-m", "multiport", "--ports", pl, "-j", "DROP"},
		[]string{"-d", peer, "-p", "tcp", "-m", "multiport", "--ports", pl, "-j", "DROP"})
}

// ensureChain creates the partition chain and hooks it into INPUT and OUTPUT once. The chain's
// first rule lets loopback traffic through (iptables sees it on INPUT and OUTPUT too).
func ensureChain(ctx context.Context, h Host) error {
	if iptables(ctx, h, "-S", chain) == nil {
		return nil
	}
	for _, args := range [][]string{
		{"-N", chain},
		{"-A", chain, "-i", "lo", "-j", "RETURN"},
		{"-A", chain, "-o", "lo", "-j", "RETURN"},
		{"-I", "INPUT", "-j", chain},
		{"-I", "OUTPUT", "-j", chain},
	} {
		if err := iptables(ctx, h, args...); err != nil {
			return err
		}
	}
	return nil
}

func iptables(ctx context.Context, h Host, args ...string) error {
	cmd := exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + h.NetNS, "--", "iptables", "-w"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
