// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"context"
	"net"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/controller"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
)

// memHosts are hosts in memory, each made once.
type memHosts struct {
	mu      sync.Mutex
	hosts   map[string]controller.Host
	creates int
}

func (m *memHosts) Create(_ context.Context, name string, _ []byte, _ map[string]string) (controller.Host, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.creates++
	if h, ok := m.hosts[name]; ok {
		return h, nil
	}
	h := memHost(name)
	m.hosts[name] = h
	return h, nil
}

func (m *memHosts) Delete(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.hosts, name)
	return nil
}

type memHost string

func (h memHost) Name() string       { return string(h) }
func (h memHost) IP() netip.Addr     { return netip.MustParseAddr("127.0.0.1") }
func (h memHost) Bootstrapped() bool { return true }

// A controller elsewhere, through the client, makes the lab's balancer with the LabCluster's
// configuration and registers a host; the lab reads the member from the balancer itself, and
// a second controller (a restarted Pod) finds the balancer and the host as the first left them.
func TestClientLocalCloud(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	local, err := controller.NewLocal(controller.LocalOptions{Hosts: &memHosts{hosts: map[string]controller.Host{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	srv := httptest.NewServer(Handler(local, token, nil))
	defer srv.Close()
	pod := func() *Client {
		c, err := NewClient(ClientOptions{URL: srv.URL, Token: token})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	first := pod()
	spec := infra.LabClusterSpec{LoadBalancer: infra.LoadBalancer{HealthCheck: lb.CheckTCP, IntervalSeconds: 1, UnhealthyThreshold: 1}}
	addr, created, err := first.EnsureBalancer(ctx, "default", "w1", spec)
	if err != nil || !created {
		t.Fatalf("EnsureBalancer = %q, %v, %v", addr, created, err)
	}
	if host, _, err := net.SplitHostPort(addr); err != nil || host != "127.0.0.1" {
		t.Errorf("balancer at %q, want 127.0.0.1 (LocalOptions.Address's default): %v", addr, err)
	}
	h, err := first.CreateHost(ctx, "w1-control-plane-abcde", []byte("#cloud-config\n"), nil)
	if err != nil || !h.Up {
		t.Fatalf("CreateHost = %+v, %v", h, err)
	}
	if err := first.Register(ctx, "default", "w1", h.Name, net.JoinHostPort(h.IP.String(), "6443")); err != nil {
		t.Fatal(err)
	}
	if _, in := local.Balancer("default", "w1").Backends()[h.Name]; !in {
		t.Errorf("the lab's balancer has no member %s: %v", h.Name, local.Balancer("default", "w1").Backends())
	}

	second := pod()
	again, created, err := second.EnsureBalancer(ctx, "default", "w1", spec)
	if err != nil || created || again != addr {
		t.Errorf("the second controller's EnsureBalancer = %q, %v, %v; want the first's %s", again, created, err, addr)
	}
	got, err := second.Host(ctx, h.Name)
	if want := (controller.HostInfo{Name: h.Name, Up: true, IP: h.IP, Bootstrapped: true, Balancer: "default/w1"}); err != nil || got != want {
		t.Errorf("the second controller's Host = %+v, %v; want %+v", got, err, want)
	}
	if err := second.Deregister(ctx, h.Name); err != nil {
		t.Fatal(err)
	}
	if deleted, err := second.DeleteBalancer(ctx, "default", "w1"); err != nil || !deleted || local.Balancer("default", "w1") != nil {
		t.Errorf("DeleteBalancer = %v, %v; the lab still has %v", deleted, err, local.Balancer("default", "w1"))
	}
	if _, _, err := second.EnsureBalancer(ctx, "default", "w2", infra.LabClusterSpec{LoadBalancer: infra.LoadBalancer{HealthCheck: "icmp"}}); err == nil {
		t.Error("EnsureBalancer with an unknown health check succeeded")
	}
}
