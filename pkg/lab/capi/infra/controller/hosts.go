// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package controller

import (
	"context"
	"net/netip"
)

// Hosts makes and ends lab hosts. The controller keeps no state a restart would need: Create
// of a host that already runs returns it, Delete of a host that is gone succeeds.
type Hosts interface {
	// Create brings up host name and runs the bootstrap cloud-config on it (write_files,
	// runcmd) with meta as its instance metadata ({{ ds.meta_data.KEY }}); it returns once the
	// host runs the bootstrap, without waiting for kubeadm to finish.
	Create(ctx context.Context, name string, bootstrap []byte, meta map[string]string) (Host, error)
	// Delete stops host name and removes what it left.
	Delete(ctx context.Context, name string) error
}

// Host is one lab host.
type Host interface {
	Name() string
	// IP is the host's address on the lab network, where its apiserver listens (APIServerPort).
	IP() netip.Addr
	// Bootstrapped reports whether the bootstrap wrote its sentinel (cloudinit.Sentinel).
	Bootstrapped() bool
}

// APIServerPort is where a control-plane host's apiserver listens (kubeadm's default).
const APIServerPort = 6443
