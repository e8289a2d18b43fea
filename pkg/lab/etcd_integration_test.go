// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/etcd"
)

// TestIntegrationEtcdMembership grows a real one-member etcd cluster to two and shrinks it back
// to one through the gateway client, as AddMember and RemoveMember do. It needs only etcd, on the
// loopback network (no root).
// Run it holding the lab lock: flock /tmp/credwatch-lab.lock go test -run TestIntegrationEtcd ./pkg/lab
func TestIntegrationEtcdMembership(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts etcd (skipped under -short)")
	}
	o := Options{Dir: t.TempDir(), Members: 1, Log: io.Discard, Wait: time.Minute, Network: NetworkLoopback}
	if err := o.complete(); err != nil {
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
	c, err := l.newEtcdCluster()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	first := c.Next()
	if err := c.Start(ctx, first, etcd.InitialCluster([]*etcd.Member{first}), "new"); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(ctx, first); err != nil {
		t.Fatal(err)
	}
	second, err := c.Add(ctx)
	if err != nil {
		t.Fatalf("Add: %v", err)
	}
	names := func() []string {
		t.Helper()
		cl, err := c.Client("")
		if err != nil {
			t.Fatal(err)
		}
		ms, err := cl.MemberList(ctx)
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
		t.Fatalf("members after add: %v, want %s and %s", got, first.Name, second.Name)
	}
	if err := c.Remove(ctx, first.Name); err != nil {
		t.Fatalf("Remove %s: %v", first.Name, err)
	}
	if got := names(); len(got) != 1 || got[0] != second.Name {
		t.Errorf("members after removing %s: %v, want [%s]", first.Name, got, second.Name)
	}
}
