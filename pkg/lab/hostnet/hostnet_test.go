// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package hostnet

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain doubles as a tiny TCP server run inside a lab host (HOSTNET_TEST_SERVE=addr).
func TestMain(m *testing.M) {
	if addr := os.Getenv("HOSTNET_TEST_SERVE"); addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(1)
			}
			_, _ = c.Write([]byte("hello\n"))
			_ = c.Close()
		}
	}
	os.Exit(m.Run())
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		prefix, subnet string
		ok             bool
	}{
		{"cw37", "10.200.37.0/24", true},
		{"", "10.200.37.0/24", false},
		{"much-too-long", "10.200.37.0/24", false},
		{"cw", "10.200.37.5/24", false},
		{"cw", "10.200.0.0/16", false},
		{"cw", "fd00::/120", false},
	} {
		p, _ := netip.ParsePrefix(tc.subnet)
		err := Config{Prefix: tc.prefix, Subnet: p}.validate()
		if (err == nil) != tc.ok {
			t.Errorf("validate(%q, %q) = %v, want ok=%v", tc.prefix, tc.subnet, err, tc.ok)
		}
	}
}

func TestBlockRules(t *testing.T) {
	b := Block{Peer: netip.MustParsePrefix("10.200.1.0/24"), Except: []netip.Addr{netip.MustParseAddr("10.200.1.1")}, Ports: []uint16{2379, 2380}}
	got := fmt.Sprint(b.rules())
	for _, want := range []string{"-s 10.200.1.1 -j RETURN", "--ports 2379,2380 -j DROP", "-d 10.200.1.0/24"} {
		if !strings.Contains(got, want) {
			t.Errorf("rules %s lack %q", got, want)
		}
	}
}

func TestIntegrationNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("creates network namespaces: skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Fatal("lab network test needs root (network namespaces)")
	}
	ctx := context.Background()
	prefix := fmt.Sprintf("cwt%d", os.Getpid()%10000)
	n, err := Create(ctx, Config{Prefix: prefix, Subnet: netip.MustParsePrefix("10.200.250.0/24")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Destroy(context.Background()); err != nil {
			t.Error(err)
		}
		out, _ := exec.Command("ip", "-br", "link").Output()
		ns, _ := exec.Command("ip", "netns", "list").Output()
		if strings.Contains(string(out)+string(ns), prefix+"-") {
			t.Errorf("left behind after Destroy:\n%s\n%s", out, ns)
		}
	})
	a, err := n.AddHost(ctx, "a", netip.MustParseAddr("10.200.250.11"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := n.AddHost(ctx, "b", netip.MustParseAddr("10.200.250.12"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.AddHost(ctx, "c", netip.MustParseAddr("10.200.251.3")); err == nil {
		t.Error("AddHost outside the subnet succeeded")
	}
	srv := a.Command(os.Args[0])
	srv.Env = append(os.Environ(), "HOSTNET_TEST_SERVE="+a.IP.String()+":7000")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	addr := a.IP.String() + ":7000"
	waitDial(t, addr, true)
	// From host b, through the bridge.
	if out, err := b.Command(os.Args[0], "-test.run=^$").CombinedOutput(); err != nil {
		t.Fatalf("running inside host b: %v: %s", err, out)
	}
	if err := n.Partition(ctx, "a", Block{Peer: netip.PrefixFrom(n.Gateway(), 32)}); err != nil {
		t.Fatal(err)
	}
	if k, _ := n.Partitioned(ctx, "a"); k != 2 {
		t.Errorf("Partitioned = %d, want 2 drop rules", k)
	}
	waitDial(t, addr, false)
	if err := n.Heal(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	waitDial(t, addr, true)
}

func waitDial(t *testing.T, addr string, want bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
		if err == nil {
			_ = c.Close()
		}
		if (err == nil) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("dial %s: err=%v, want reachable=%v", addr, err, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
