// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package lb is the lab's TCP load balancer: TLS passthrough, round robin over named backends,
// with a health check run every second (Config.Check) and a mode that decides whether failing
// backends still get connections, as a cloud load balancer whose check passes a sick apiserver.
package lb

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Mode selects which backends get new connections.
type Mode string

const (
	// Ready skips backends whose last health check failed.
	Ready Mode = "ready"
	// All keeps sending to backends that fail their check, like the ELB in the seed incident.
	All Mode = "all"
)

// Check reports whether the backend at addr is healthy; it must return within ctx.
type Check func(ctx context.Context, addr string) bool

// Config is what New needs besides the listener.
type Config struct {
	Mode Mode
	// Check runs every Interval (default one second) on every backend, each bounded by two
	// seconds. Nil leaves health as Add set it (tests, one-backend forwarders).
	Check    Check
	Interval time.Duration
	// UnhealthyAfter and HealthyAfter are the failures (passes) in a row that take a backend out
	// of (back into) rotation, as cloud load balancers count them; default 1 each.
	UnhealthyAfter, HealthyAfter int
}

// backend is one member behind the load balancer.
type backend struct {
	name    string
	addr    string
	healthy atomic.Bool
	streak  int          // checks in a row that disagreed with healthy (checkLoop's goroutine only)
	open    atomic.Int64 // connections being passed through to it
}

// LoadBalancer is a TCP (TLS passthrough) round-robin balancer. Its methods are safe for
// concurrent use.
type LoadBalancer struct {
	ln     net.Listener
	mode   atomic.Value // Mode
	check  Check
	every  time.Duration
	fall   int
	rise   int
	mu     sync.Mutex
	pool   []*backend
	next   int
	conns  sync.WaitGroup
	stop   chan struct{}
	closed atomic.Bool
	active sync.Map // net.Conn -> struct{}
}

// New serves ln until Close.
func New(ln net.Listener, c Config) *LoadBalancer {
	lb := &LoadBalancer{ln: ln, check: c.Check, every: c.Interval, fall: max(c.UnhealthyAfter, 1), rise: max(c.HealthyAfter, 1),
		stop: make(chan struct{})}
	if lb.every <= 0 {
		lb.every = time.Second
	}
	if c.Mode == "" {
		c.Mode = Ready
	}
	lb.mode.Store(c.Mode)
	go lb.serve()
	if lb.check != nil {
		go lb.checkLoop()
	}
	return lb
}

// Addr is the address the balancer listens on.
func (lb *LoadBalancer) Addr() string { return lb.ln.Addr().String() }

// SetMode switches the mode for new connections.
func (lb *LoadBalancer) SetMode(m Mode) { lb.mode.Store(m) }

// Mode is the current mode.
func (lb *LoadBalancer) Mode() Mode { return lb.mode.Load().(Mode) }

// Add puts a backend in the pool, healthy or not until its first check.
func (lb *LoadBalancer) Add(name, addr string, healthy bool) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	b := &backend{name: name, addr: addr}
	b.healthy.Store(healthy)
	lb.pool = append(lb.pool, b)
}

// Remove takes the backend out of the pool; open connections stay.
func (lb *LoadBalancer) Remove(name string) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	for i, b := range lb.pool {
		if b.name == name {
			lb.pool = append(lb.pool[:i:i], lb.pool[i+1:]...)
			return
		}
	}
}

// Backends returns the names in the pool and whether each passed its last check.
func (lb *LoadBalancer) Backends() map[string]bool {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	out := map[string]bool{}
	for _, b := range lb.pool {
		out[b.name] = b.healthy.Load()
	}
	return out
}

// Open returns, for each backend in the pool, how many connections are being passed through to
// it now. A failing check stops new connections only: those already open stay, as with a TCP
// passthrough cloud balancer.
func (lb *LoadBalancer) Open() map[string]int {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	out := map[string]int{}
	for _, b := range lb.pool {
		out[b.name] = int(b.open.Load())
	}
	return out
}

// candidates returns the backends to try for one connection, in round-robin order.
func (lb *LoadBalancer) candidates() []*backend {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	n := len(lb.pool)
	if n == 0 {
		return nil
	}
	start := lb.next % n
	lb.next++
	all := lb.Mode() == All
	var out []*backend
	for i := 0; i < n; i++ {
		b := lb.pool[(start+i)%n]
		if all || b.healthy.Load() {
			out = append(out, b)
		}
	}
	return out
}

func (lb *LoadBalancer) serve() {
	for {
		c, err := lb.ln.Accept()
		if err != nil {
			if lb.closed.Load() {
				return
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		lb.conns.Add(1)
		go func() { defer lb.conns.Done(); lb.handle(c) }()
	}
}

func (lb *LoadBalancer) handle(c net.Conn) {
	defer c.Close()
	var up net.Conn
	for _, b := range lb.candidates() {
		var err error
		up, err = net.DialTimeout("tcp", b.addr, 2*time.Second)
		if err == nil {
			b.open.Add(1)
			defer b.open.Add(-1)
			break
		}
	}
	if up == nil {
		return
	}
	defer up.Close()
	lb.active.Store(c, struct{}{})
	lb.active.Store(up, struct{}{})
	defer lb.active.Delete(c)
	defer lb.active.Delete(up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
}

func (lb *LoadBalancer) checkLoop() {
	t := time.NewTicker(lb.every)
	defer t.Stop()
	for {
		select {
		case <-lb.stop:
			return
		case <-t.C:
		}
		lb.mu.Lock()
		pool := append([]*backend(nil), lb.pool...)
		lb.mu.Unlock()
		var wg sync.WaitGroup
		for _, b := range pool {
			wg.Add(1)
			go func(b *backend) {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				b.judge(lb.check(ctx, b.addr), lb.fall, lb.rise)
			}(b)
		}
		wg.Wait()
	}
}

// judge counts one check's result: the backend's health flips after fall failures (rise passes)
// in a row.
func (b *backend) judge(ok bool, fall, rise int) {
	if ok == b.healthy.Load() {
		b.streak = 0
		return
	}
	b.streak++
	if (ok && b.streak >= rise) || (!ok && b.streak >= fall) {
		b.healthy.Store(ok)
		b.streak = 0
	}
}

// Close stops accepting, closes every open connection and waits for their handlers.
func (lb *LoadBalancer) Close() {
	if lb.closed.Swap(true) {
		return
	}
	close(lb.stop)
	_ = lb.ln.Close()
	lb.active.Range(func(k, _ any) bool { _ = k.(net.Conn).Close(); return true })
	lb.conns.Wait()
}
