// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"io"
	"testing"
	"time"
)

// TestIntegrationEtcdMembership grows a real one-member etcd cluster to two and shrinks it back
// to one through the gateway client, as AddMember and RemoveMember do. It needs only etcd, on the
// loopback network (no root).
// Run it holding the lab lock: flock /tmp/credwatch-itest.lock go test -run TestIntegrationEtcd ./pkg/lab
func TestIntegrationEtcdMembership(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts etcd (skipped under -short)")
	}
	o := Options{Dir: t.TempDir(), Members: 1, Log: io.Discard, Wait: time.Minute, Network: NetworkLoopback}
	if err := o.complete(); err != nil {
		t.Fatal(err)
	}
	if _, err := Binary(o.BinDir, "", "etcd"); err != nil {
		t.Fatal(err)
	}
	l := &Lab{o: o, logs: map[string]string{}}
	if err := l.prepareDir(); err != nil {
		t.Fatal(err)
	}
	ln, err := l.reserveAddresses()
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	t.Cleanup(func() {
		for _, e := range l.etcd {
			e.proc.Stop(stopGrace)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	first := l.newEtcd()
	if err := l.startEtcd(ctx, first, initialCluster([]*etcdProc{first}), "new"); err != nil {
		t.Fatal(err)
	}
	if err := l.waitEtcd(ctx, first); err != nil {
		t.Fatal(err)
	}
	second, err := l.addEtcd(ctx)
	if err != nil {
		t.Fatalf("addEtcd: %v", err)
	}
	names := func() []string {
		t.Helper()
		c, err := l.etcdClient("")
		if err != nil {
			t.Fatal(err)
		}
		ms, err := c.MemberList(ctx)
		if err != nil {
			t.Fatalf("MemberList: %v", err)
		}
		var out []string
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	if got := names(); len(got) != 2 || got[0] == got[1] {
		t.Fatalf("members after add: %v, want %s and %s", got, first.name, second.name)
	}
	if err := l.removeEtcd(ctx, first.name); err != nil {
		t.Fatalf("removeEtcd %s: %v", first.name, err)
	}
	if got := names(); len(got) != 1 || got[0] != second.name {
		t.Errorf("members after removing %s: %v, want [%s]", first.name, got, second.name)
	}
}
