// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package kubeadm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"path/filepath"
	"sort"
	"sync"

	"github.com/credwatch/credwatch/pkg/lab/hostnet"
)

// Host addresses and pod subnets a Pool hands out: 10.200.X.100-199 on the lab network (the lab's
// own control-plane hosts are .11-.19, its worker nodes .201 and up) and 10.244.100-199.0/24.
const (
	firstHostOctet = 100
	maxHosts       = 100
)

// PoolConfig is what every host of a Pool shares.
type PoolConfig struct {
	Network  *hostnet.Network // the lab network the hosts join
	Dir      string           // hosts' directories are Dir/NAME
	Kubelet  string
	Binaries Binaries
	Images   []string
	Log      io.Writer
}

// Pool makes and ends kubeadm hosts on a lab network, each with an address and pod subnet of its
// own: what a LabMachine is. Its methods are safe for concurrent use.
type Pool struct {
	cfg   PoolConfig
	mu    sync.Mutex
	hosts map[string]*Host
	slots map[string]int // host name -> its slot (address .100+slot)
}

// NewPool returns an empty pool.
func NewPool(cfg PoolConfig) *Pool {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	return &Pool{cfg: cfg, hosts: map[string]*Host{}, slots: map[string]int{}}
}

// Create brings up host name (or returns the running one) and runs bootstrap on it with meta
// (local_hostname is set to name when missing). It returns once the bootstrap's commands run.
func (p *Pool) Create(ctx context.Context, name string, bootstrap []byte, meta map[string]string) (*Host, error) {
	p.mu.Lock()
	if h, ok := p.hosts[name]; ok {
		p.mu.Unlock()
		return h, nil
	}
	slot, err := p.freeSlot()
	if err != nil {
		p.mu.Unlock()
		return nil, fmt.Errorf("kubeadm host %s: %w", name, err)
	}
	p.slots[name] = slot
	p.mu.Unlock()

	h, err := p.start(ctx, name, slot, bootstrap, meta)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		delete(p.slots, name)
		return nil, err
	}
	p.hosts[name] = h
	return h, nil
}

func (p *Pool) start(ctx context.Context, name string, slot int, bootstrap []byte, meta map[string]string) (*Host, error) {
	gw := p.cfg.Network.Gateway().As4()
	addr := netip.AddrFrom4([4]byte{gw[0], gw[1], gw[2], byte(firstHostOctet + slot)})
	nh, err := p.cfg.Network.AddHost(ctx, name, addr)
	if err != nil {
		return nil, err
	}
	h, err := StartHost(ctx, HostConfig{
		Name: name, Dir: filepath.Join(p.cfg.Dir, name), Host: nh,
		PodCIDR: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 244, byte(firstHostOctet + slot), 0}), 24),
		Kubelet: p.cfg.Kubelet, Binaries: p.cfg.Binaries, Images: p.cfg.Images, Log: p.cfg.Log,
	})
	if err != nil {
		return nil, errors.Join(err, p.cfg.Network.RemoveHost(context.WithoutCancel(ctx), name))
	}
	m := map[string]string{"local_hostname": name, "instance_id": name}
	for k, v := range meta {
		m[k] = v
	}
	if err := h.Bootstrap(bootstrap, m); err != nil {
		return nil, errors.Join(err, h.Stop(context.WithoutCancel(ctx)), p.cfg.Network.RemoveHost(context.WithoutCancel(ctx), name))
	}
	return h, nil
}

// freeSlot is the lowest slot no host holds (p.mu held).
func (p *Pool) freeSlot() (int, error) {
	used := map[int]bool{}
	for _, s := range p.slots {
		used[s] = true
	}
	for s := range maxHosts {
		if !used[s] {
			return s, nil
		}
	}
	return 0, fmt.Errorf("all %d kubeadm host addresses are taken", maxHosts)
}

// Get returns the running host name.
func (p *Pool) Get(name string) (*Host, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.hosts[name]
	return h, ok
}

// Names lists the running hosts, sorted.
func (p *Pool) Names() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.hosts))
	for n := range p.hosts {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Delete stops host name and removes its network namespace; a host that is not running is not an
// error.
func (p *Pool) Delete(ctx context.Context, name string) error {
	p.mu.Lock()
	h, ok := p.hosts[name]
	p.mu.Unlock()
	if !ok {
		return nil
	}
	err := errors.Join(h.Stop(ctx), p.cfg.Network.RemoveHost(ctx, name))
	p.mu.Lock()
	delete(p.hosts, name)
	delete(p.slots, name)
	p.mu.Unlock()
	return err
}

// Close deletes every host.
func (p *Pool) Close(ctx context.Context) error {
	var errs []error
	for _, n := range p.Names() {
		errs = append(errs, p.Delete(ctx, n))
	}
	return errors.Join(errs...)
}
