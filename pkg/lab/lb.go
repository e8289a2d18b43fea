// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// backend is one member behind the load balancer.
type backend struct {
	name    string
	addr    string
	healthy atomic.Bool
}

// loadBalancer is a TCP (TLS passthrough) round-robin balancer.
type loadBalancer struct {
	ln     net.Listener
	mode   atomic.Value // LBMode
	mu     sync.Mutex
	pool   []*backend
	next   int
	client *http.Client
	conns  sync.WaitGroup
	stop   chan struct{}
	closed atomic.Bool
	active sync.Map // net.Conn -> struct{}
}

func newLoadBalancer(ln net.Listener, mode LBMode, tlsConf *tls.Config) *loadBalancer {
	return newLB(ln, mode, tlsConf, true)
}

// newLB is newLoadBalancer; check=false leaves health flags to the caller (tests).
func newLB(ln net.Listener, mode LBMode, tlsConf *tls.Config, check bool) *loadBalancer {
	lb := &loadBalancer{
		ln:   ln,
		stop: make(chan struct{}),
		client: &http.Client{
			Timeout:   2 * time.Second,
			Transport: &http.Transport{TLSClientConfig: tlsConf, DisableKeepAlives: true},
		},
	}
	lb.mode.Store(mode)
	go lb.serve()
	if check {
		go lb.checkLoop()
	}
	return lb
}

func (lb *loadBalancer) setMode(m LBMode) { lb.mode.Store(m) }
func (lb *loadBalancer) getMode() LBMode  { return lb.mode.Load().(LBMode) }

func (lb *loadBalancer) add(name, addr string, healthy bool) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	b := &backend{name: name, addr: addr}
	b.healthy.Store(healthy)
	lb.pool = append(lb.pool, b)
}

func (lb *loadBalancer) remove(name string) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	for i, b := range lb.pool {
		if b.name == name {
			lb.pool = append(lb.pool[:i:i], lb.pool[i+1:]...)
			return
		}
	}
}

// backends returns the names in the pool and whether each passed its last /readyz.
func (lb *loadBalancer) backends() map[string]bool {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	out := map[string]bool{}
	for _, b := range lb.pool {
		out[b.name] = b.healthy.Load()
	}
	return out
}

// candidates returns the backends to try for one connection, in round-robin order.
func (lb *loadBalancer) candidates() []*backend {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	n := len(lb.pool)
	if n == 0 {
		return nil
	}
	start := lb.next % n
	lb.next++
	all := lb.getMode() == LBAll
	var out []*backend
	for i := 0; i < n; i++ {
		b := lb.pool[(start+i)%n]
		if all || b.healthy.Load() {
			out = append(out, b)
		}
	}
	return out
}

func (lb *loadBalancer) serve() {
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

func (lb *loadBalancer) handle(c net.Conn) {
	defer c.Close()
	var up net.Conn
	for _, b := range lb.candidates() {
		var err error
		up, err = net.DialTimeout("tcp", b.addr, 2*time.Second)
		if err == nil {
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

func (lb *loadBalancer) checkLoop() {
	t := time.NewTicker(time.Second)
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
				b.healthy.Store(lb.ready(b.addr))
			}(b)
		}
		wg.Wait()
	}
}

func (lb *loadBalancer) ready(addr string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return readyz(ctx, lb.client, "https://"+addr) == nil
}

func (lb *loadBalancer) close() {
	if lb.closed.Swap(true) {
		return
	}
	close(lb.stop)
	_ = lb.ln.Close()
	lb.active.Range(func(k, _ any) bool { _ = k.(net.Conn).Close(); return true })
	lb.conns.Wait()
}
