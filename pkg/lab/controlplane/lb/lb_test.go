// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lb

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// echoServer answers every connection with its name and closes it.
func echoServer(t *testing.T, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte(name))
			_ = c.Close()
		}
	}()
	return ln.Addr().String()
}

func TestLoadBalancerModes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lb := New(ln, Config{Mode: Ready})
	defer lb.Close()
	lb.Add("a", echoServer(t, "a"), true)
	lb.Add("b", echoServer(t, "b"), true)
	lb.Add("c", echoServer(t, "c"), false)
	get := func() string {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		return string(b)
	}
	tests := []struct {
		mode Mode
		want map[string]bool
	}{
		{Ready, map[string]bool{"a": true, "b": true}},
		{All, map[string]bool{"a": true, "b": true, "c": true}},
	}
	for _, tt := range tests {
		lb.SetMode(tt.mode)
		seen := map[string]bool{}
		for i := 0; i < 6; i++ {
			seen[get()] = true
		}
		if len(seen) != len(tt.want) {
			t.Errorf("mode %s reached %v, want %v", tt.mode, seen, tt.want)
		}
		for k := range seen {
			if !tt.want[k] {
				t.Errorf("mode %s reached %s", tt.mode, k)
			}
		}
	}
	lb.Remove("a")
	lb.SetMode(Ready)
	for i := 0; i < 3; i++ {
		if got := get(); got != "b" {
			t.Errorf("after removing a, ready mode reached %q", got)
		}
	}
}

// TestOpenOutlivesHealth: a connection opened while the backend was healthy stays open, and
// counted, after its check fails; only new connections go elsewhere.
func TestOpenOutlivesHealth(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = held.Close() })
	go func() {
		for {
			c, err := held.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c); _ = c.Close() }() // holds until the client closes
		}
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var oldHealthy atomic.Bool
	oldHealthy.Store(true)
	lb := New(ln, Config{Mode: Ready, Interval: 10 * time.Millisecond, Check: func(_ context.Context, addr string) bool {
		return addr != held.Addr().String() || oldHealthy.Load()
	}})
	defer lb.Close()
	lb.Add("old", held.Addr().String(), true)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	waitOpen(t, lb, "old", 1)
	lb.Add("new", echoServer(t, "new"), true)
	oldHealthy.Store(false) // out of rotation after its next check
	for lb.Backends()["old"] {
		time.Sleep(10 * time.Millisecond)
	}
	waitOpen(t, lb, "old", 1)
	_ = c.Close()
	waitOpen(t, lb, "old", 0)
}

func waitOpen(t *testing.T, lb *LoadBalancer, name string, want int) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if lb.Open()[name] == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("open connections to %s = %d, want %d", name, lb.Open()[name], want)
}
