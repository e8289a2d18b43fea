// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package controller

import (
	"context"
	"net/netip"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
)

// memHosts are hosts in memory: 10.0.0.N in the order made.
type memHosts struct{ hosts map[string]*memHost }

func (m *memHosts) Create(_ context.Context, name string, _ []byte, _ map[string]string) (Host, error) {
	if h, ok := m.hosts[name]; ok {
		return h, nil
	}
	h := &memHost{name: name, ip: netip.AddrFrom4([4]byte{10, 0, 0, byte(1 + len(m.hosts))})}
	m.hosts[name] = h
	return h, nil
}

func (m *memHosts) Delete(_ context.Context, name string) error {
	delete(m.hosts, name)
	return nil
}

type memHost struct {
	name string
	ip   netip.Addr
}

func (h *memHost) Name() string       { return h.name }
func (h *memHost) IP() netip.Addr     { return h.ip }
func (h *memHost) Bootstrapped() bool { return false }

// The LocalCloud's calls are idempotent, and a host's balancer is the one it was registered
// with while that balancer has it.
func TestLocalCloud(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if _, err := NewLocal(LocalOptions{}); err == nil {
		t.Error("NewLocal without Hosts succeeded")
	}
	l, err := NewLocal(LocalOptions{Hosts: &memHosts{hosts: map[string]*memHost{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Register(ctx, "ns", "w1", "m1", "10.0.0.1:6443"); err == nil {
		t.Error("Register before the balancer exists succeeded")
	}
	spec := infra.LabClusterSpec{LoadBalancer: infra.LoadBalancer{HealthCheck: "tcp"}}
	addr, created, err := l.EnsureBalancer(ctx, "ns", "w1", spec)
	if err != nil || !created {
		t.Fatalf("EnsureBalancer = %q, %v, %v; want a new balancer", addr, created, err)
	}
	again, created, err := l.EnsureBalancer(ctx, "ns", "w1", spec)
	if err != nil || created || again != addr {
		t.Errorf("second EnsureBalancer = %q, %v, %v; want %q, not created", again, created, err, addr)
	}
	if b := l.Balancer("ns", "w1"); b == nil || b.Addr() != addr {
		t.Errorf("Balancer = %v, want the one at %s", b, addr)
	}
	if h, err := l.Host(ctx, "m1"); err != nil || h.Up {
		t.Errorf("Host before CreateHost = %+v, %v; want not up", h, err)
	}
	h, err := l.CreateHost(ctx, "m1", nil, nil)
	if want := (HostInfo{Name: "m1", Up: true, IP: netip.MustParseAddr("10.0.0.1")}); err != nil || h != want {
		t.Errorf("CreateHost = %+v, %v; want %+v", h, err, want)
	}
	register := func() error { return l.Register(ctx, "ns", "w1", "m1", "10.0.0.1:6443") }
	deregister := func() error { return l.Deregister(ctx, "m1") }
	for _, s := range []struct {
		name string
		do   func() error
		want string // the host's balancer after the step
	}{
		{"register", register, "ns/w1"},
		{"register again", register, "ns/w1"},
		{"deregister", deregister, ""},
		{"deregister again", deregister, ""},
		{"register before the close", register, "ns/w1"},
		{"close the balancer", func() error { _, err := l.DeleteBalancer(ctx, "ns", "w1"); return err }, ""},
	} {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if h, _ := l.Host(ctx, "m1"); h.Balancer != s.want {
			t.Errorf("after %s: the host's balancer is %q, want %q", s.name, h.Balancer, s.want)
		}
	}
	if deleted, err := l.DeleteBalancer(ctx, "ns", "w1"); err != nil || deleted {
		t.Errorf("second DeleteBalancer = %v, %v; want nothing deleted", deleted, err)
	}
	if err := l.DeleteHost(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	if h, _ := l.Host(ctx, "m1"); h.Up {
		t.Errorf("Host after DeleteHost = %+v, want not up", h)
	}
}
