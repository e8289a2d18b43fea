// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package controller

import (
	"context"
	"net/netip"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
)

// Cloud is what the controller asks of the lab's cloud, as a real provider asks its cloud's
// API for instances and load balancers: the hosts and the LabClusters' balancers live there,
// not in the controller, so that a controller that restarts or moves (a Pod in the workload
// cluster, package capi/infra/cloud) goes on from them. Every call is idempotent: creating what
// exists returns it, deleting what is gone succeeds. LocalCloud is the in-process one.
type Cloud interface {
	// CreateHost brings up host name and runs the bootstrap cloud-config on it with meta as its
	// instance metadata (Hosts.Create); a host that already runs is returned as it is.
	CreateHost(ctx context.Context, name string, bootstrap []byte, meta map[string]string) (HostInfo, error)
	// Host describes host name; HostInfo.Up is false when it does not run.
	Host(ctx context.Context, name string) (HostInfo, error)
	// DeleteHost stops host name and removes what it left.
	DeleteHost(ctx context.Context, name string) error
	// EnsureBalancer gives LabCluster namespace/name a balancer configured by spec.LoadBalancer
	// (health check, interval, threshold), listening at spec.ControlPlaneEndpoint when it is
	// set; it returns the balancer's address (host:port) and whether it was made now. A
	// balancer keeps the configuration it was made with.
	EnsureBalancer(ctx context.Context, namespace, name string, spec infra.LabClusterSpec) (addr string, created bool, err error)
	// DeleteBalancer closes LabCluster namespace/name's balancer; deleted is false when it had
	// none.
	DeleteBalancer(ctx context.Context, namespace, name string) (deleted bool, err error)
	// Register makes host a member of LabCluster namespace/name's balancer at addr (host:port),
	// out of rotation until its first health check passes, as a cloud balancer's new member.
	Register(ctx context.Context, namespace, name, host, addr string) error
	// Deregister takes host out of the balancer it is a member of, if any.
	Deregister(ctx context.Context, host string) error
}

// HostInfo is what the cloud says of one host.
type HostInfo struct {
	Name string `json:"name"`
	// Up: the host runs (it was created and not deleted since).
	Up bool `json:"up"`
	// IP is the host's address on the lab network, where its apiserver listens
	// (APIServerPort); invalid when the host is not up.
	IP netip.Addr `json:"ip,omitzero"`
	// Bootstrapped: the bootstrap wrote its sentinel (cloudinit.Sentinel).
	Bootstrapped bool `json:"bootstrapped,omitempty"`
	// Balancer is the LabCluster (namespace/name) whose balancer has the host as a member, ""
	// if none.
	Balancer string `json:"balancer,omitempty"`
}
