// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lb

import (
	"io"
	"net"
	"testing"
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
