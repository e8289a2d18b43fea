// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/credwatch/credwatch/pkg/lab/hostnet"
)

// PartitionFrom says what a member is cut off from.
type PartitionFrom string

const (
	// PartitionEtcd cuts the member's host from every other host's etcd traffic (client 2379 and
	// peer 2380): its etcd member loses the quorum, so its apiserver's etcd readiness check fails.
	PartitionEtcd PartitionFrom = "etcd"
	// PartitionLB cuts the member from the machine (the load balancer, and credwatch run there).
	PartitionLB PartitionFrom = "lb"
	// PartitionMembers cuts the member from every other control-plane and node host.
	PartitionMembers PartitionFrom = "members"
)

// ValidatePartitionFrom reports whether f is a known partition.
func ValidatePartitionFrom(f PartitionFrom) error {
	switch f {
	case PartitionEtcd, PartitionLB, PartitionMembers:
		return nil
	}
	return fmt.Errorf("unknown partition %q (want %q, %q or %q)", f, PartitionEtcd, PartitionLB, PartitionMembers)
}

// Partition drops traffic between member (an apiserver name) and what from names, with iptables
// rules inside the member's host namespace. It needs the hosts network.
func (l *Lab) Partition(ctx context.Context, member string, from PartitionFrom) error {
	if err := ValidatePartitionFrom(from); err != nil {
		return err
	}
	host, err := l.memberHost(member)
	if err != nil {
		return err
	}
	subnet, gw := l.hosts.Subnet(), l.hosts.Gateway()
	var b hostnet.Block
	switch from {
	case PartitionEtcd:
		b = hostnet.Block{Peer: subnet, Ports: []uint16{2379, 2380}}
	case PartitionLB:
		b = hostnet.Block{Peer: netip.PrefixFrom(gw, 32)}
	case PartitionMembers:
		b = hostnet.Block{Peer: subnet, Except: []netip.Addr{gw}}
	}
	if err := l.hosts.Partition(ctx, host, b); err != nil {
		return err
	}
	l.logf("lab: %s (host %s) partitioned from %s", member, host, from)
	return nil
}

// Heal removes every partition of member.
func (l *Lab) Heal(ctx context.Context, member string) error {
	host, err := l.memberHost(member)
	if err != nil {
		return err
	}
	if err := l.hosts.Heal(ctx, host); err != nil {
		return err
	}
	l.logf("lab: %s (host %s) healed", member, host)
	return nil
}

func (l *Lab) memberHost(member string) (string, error) {
	if l.hosts == nil {
		return "", fmt.Errorf("partitions need the hosts network (lab up --network hosts)")
	}
	n := memberNumber(member)
	h := controlPlaneHost(n)
	if _, ok := l.hosts.Host(h); !ok || n == 0 {
		return "", fmt.Errorf("no lab member %q (members: %v)", member, l.memberNames())
	}
	return h, nil
}
