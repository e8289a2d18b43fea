// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package controller

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
)

// LocalOptions configures a LocalCloud.
type LocalOptions struct {
	// Hosts makes the hosts (required).
	Hosts Hosts
	// Listen opens the listener of LabCluster namespace/name's balancer. Default: listen on the
	// spec's controlPlaneEndpoint when it is set, else on Address.
	Listen func(namespace, name string, endpoint infra.APIEndpoint) (net.Listener, error)
	// Address is where a balancer listens when neither Listen nor the endpoint say: an IP the
	// workload hosts reach (the lab network's gateway), port 0 for any. Default 127.0.0.1:0.
	Address string
	// CheckTLS is the balancers' health checks' TLS configuration. Default: do not verify the
	// member's certificate, as cloud load balancers' TLS and HTTPS checks do not.
	CheckTLS *tls.Config
}

// LocalCloud is the Cloud of this process: hosts through Hosts and in-process balancers
// (package controlplane/lb). It knows the hosts made through it. Its methods are safe for
// concurrent use; Close closes its balancers.
type LocalCloud struct {
	o LocalOptions

	mu         sync.Mutex
	balancers  map[string]*lb.LoadBalancer // LabCluster key → its balancer
	hosts      map[string]Host             // host name → host
	registered map[string]string           // host name → the LabCluster key whose balancer has it
	hostLocks  map[string]*sync.Mutex      // host name → held while the host is made or deleted
}

var _ Cloud = (*LocalCloud)(nil)

// NewLocal checks o and returns a LocalCloud.
func NewLocal(o LocalOptions) (*LocalCloud, error) {
	if o.Hosts == nil {
		return nil, errors.New("lab cloud: Hosts are required")
	}
	if o.Address == "" {
		o.Address = "127.0.0.1:0"
	}
	if o.CheckTLS == nil {
		// Cloud balancers' checks do not verify the member's certificate either.
		o.CheckTLS = &tls.Config{InsecureSkipVerify: true}
	}
	return &LocalCloud{o: o, balancers: map[string]*lb.LoadBalancer{}, hosts: map[string]Host{},
		registered: map[string]string{}, hostLocks: map[string]*sync.Mutex{}}, nil
}

// Balancer returns LabCluster namespace/name's balancer, nil if it has none.
func (l *LocalCloud) Balancer(namespace, name string) *lb.LoadBalancer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.balancers[namespace+"/"+name]
}

// Close closes every balancer (the hosts stay: they are Hosts').
func (l *LocalCloud) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, b := range l.balancers {
		b.Close()
		delete(l.balancers, k)
	}
}

// lockHost holds host name's lock: one call makes or deletes a host of a name at a time (a
// retry of a creation whose caller went away waits for it and gets its host).
func (l *LocalCloud) lockHost(name string) (unlock func()) {
	l.mu.Lock()
	m := l.hostLocks[name]
	if m == nil {
		m = &sync.Mutex{}
		l.hostLocks[name] = m
	}
	l.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// CreateHost implements Cloud.
func (l *LocalCloud) CreateHost(ctx context.Context, name string, bootstrap []byte, meta map[string]string) (HostInfo, error) {
	defer l.lockHost(name)()
	h, err := l.o.Hosts.Create(ctx, name, bootstrap, meta)
	if err != nil {
		return HostInfo{}, err
	}
	l.mu.Lock()
	l.hosts[name] = h
	l.mu.Unlock()
	return l.Host(ctx, name)
}

// Host implements Cloud.
func (l *LocalCloud) Host(_ context.Context, name string) (HostInfo, error) {
	l.mu.Lock()
	h := l.hosts[name]
	lcKey := l.registered[name]
	b := l.balancers[lcKey]
	l.mu.Unlock()
	info := HostInfo{Name: name, Up: h != nil}
	if h != nil {
		info.IP, info.Bootstrapped = h.IP(), h.Bootstrapped()
	}
	if b != nil {
		if _, in := b.Backends()[name]; in {
			info.Balancer = lcKey
		}
	}
	return info, nil
}

// DeleteHost implements Cloud.
func (l *LocalCloud) DeleteHost(ctx context.Context, name string) error {
	defer l.lockHost(name)()
	if err := l.o.Hosts.Delete(ctx, name); err != nil {
		return err
	}
	l.mu.Lock()
	delete(l.hosts, name)
	l.mu.Unlock()
	return nil
}

// EnsureBalancer implements Cloud.
func (l *LocalCloud) EnsureBalancer(_ context.Context, namespace, name string, spec infra.LabClusterSpec) (string, bool, error) {
	k := namespace + "/" + name
	l.mu.Lock() // held while the balancer is made: two calls make one
	defer l.mu.Unlock()
	if b := l.balancers[k]; b != nil {
		return b.Addr(), false, nil
	}
	conf, err := spec.LoadBalancer.BalancerConfig(l.o.CheckTLS)
	if err != nil {
		return "", false, fmt.Errorf("LabCluster %s: %w", k, err)
	}
	ln, err := l.listen(namespace, name, spec.ControlPlaneEndpoint)
	if err != nil {
		return "", false, err
	}
	b := lb.New(ln, conf)
	l.balancers[k] = b
	return b.Addr(), true, nil
}

// DeleteBalancer implements Cloud.
func (l *LocalCloud) DeleteBalancer(_ context.Context, namespace, name string) (bool, error) {
	k := namespace + "/" + name
	l.mu.Lock()
	b := l.balancers[k]
	delete(l.balancers, k)
	l.mu.Unlock()
	if b != nil {
		b.Close()
	}
	return b != nil, nil
}

// Register implements Cloud.
func (l *LocalCloud) Register(_ context.Context, namespace, name, host, addr string) error {
	k := namespace + "/" + name
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.balancers[k]
	if b == nil {
		return fmt.Errorf("LabCluster %s has no balancer yet", k)
	}
	b.Add(host, addr, false)
	l.registered[host] = k
	return nil
}

// Deregister implements Cloud.
func (l *LocalCloud) Deregister(_ context.Context, host string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.balancers[l.registered[host]]; b != nil {
		b.Remove(host)
	}
	delete(l.registered, host)
	return nil
}

// listen opens a LabCluster's balancer listener.
func (l *LocalCloud) listen(namespace, name string, ep infra.APIEndpoint) (net.Listener, error) {
	if l.o.Listen != nil {
		return l.o.Listen(namespace, name, ep)
	}
	addr := l.o.Address
	if ep.Host != "" && ep.Port != 0 {
		addr = net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for the balancer of LabCluster %s/%s: %w", namespace, name, err)
	}
	return ln, nil
}
