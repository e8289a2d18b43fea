package node_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab/hostnet"
	"github.com/credwatch/credwatch/pkg/lab/node"
)

// labNetwork makes a lab network for the nodes, destroyed by t.Cleanup after they stopped.
func labNetwork(t *testing.T, ctx context.Context) *hostnet.Network {
	t.Helper()
	netw, err := hostnet.Create(ctx, hostnet.Config{
		Prefix: fmt.Sprintf("cwn%d", os.Getpid()%10000),
		Subnet: netip.MustParsePrefix(fmt.Sprintf("10.201.%d.0/24", 100+os.Getpid()%150)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := netw.Destroy(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return netw
}

// forward relays TCP connections from listen (on the lab network) to target (the lab's loopback
// load balancer, which a network namespace cannot reach).
func forward(t *testing.T, listen, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", listen)
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
			go func() {
				defer c.Close()
				u, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer u.Close()
				done := make(chan struct{}, 2)
				for _, pair := range [][2]net.Conn{{u, c}, {c, u}} {
					go func() {
						_, _ = io.Copy(pair[0], pair[1])
						_ = pair[0].(*net.TCPConn).CloseWrite()
						done <- struct{}{}
					}()
				}
				<-done
			}()
		}
	}()
	return ln.Addr().String()
}

// logRSS logs the resident memory of the node's processes and of its containerd shims.
func logRSS(t *testing.T, n *node.Node) {
	for name, pid := range n.PIDs() {
		t.Logf("FIGURE RSS %s %s", name, vmRSS(pid))
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.HasPrefix(string(cmdline), "/usr/bin/containerd-shim") && strings.Contains(string(cmdline), n.Dir()+"/") {
			var pid int
			_, _ = fmt.Sscan(e.Name(), &pid)
			t.Logf("FIGURE RSS containerd-shim (pid %d) %s", pid, vmRSS(pid))
		}
	}
}

func vmRSS(pid int) string {
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func tailFile(file string, n int) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
