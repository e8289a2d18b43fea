// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab_test

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// TestIntegrationPartition cuts a member's host off the other etcd members with iptables inside
// its namespace: its own /readyz names the failing etcd check; healing brings it back. The lab's
// network leaves nothing on the machine once the lab is down.
func TestIntegrationPartition(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 3, Network: lab.NetworkHosts})
	prefix := l.Status(context.Background(), false).NetworkPrefix
	if prefix == "" || l.Network() == nil {
		t.Fatal("hosts network lab has no network prefix")
	}
	t.Cleanup(func() {
		// labtest's cleanup (registered first) runs after this one: check on a fresh lab.Down.
		if err := l.Down(context.Background()); err != nil {
			t.Error(err)
		}
		ns, _ := exec.Command("ip", "netns", "list").Output()
		links, _ := exec.Command("ip", "-br", "link").Output()
		if strings.Contains(string(ns)+string(links), prefix+"-") {
			t.Errorf("lab network left behind:\n%s\n%s", ns, links)
		}
	})
	m, _ := l.Member("apiserver-2")
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: l.TLSConfig(), DisableKeepAlives: true}}
	readyz := func() (int, string) {
		resp, err := c.Get(m.URL + "/readyz?verbose")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	wait := func(what string, ok func(int, string) bool) {
		t.Helper()
		var code int
		var body string
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
			if code, body = readyz(); ok(code, body) {
				return
			}
		}
		t.Fatalf("%s: /readyz of %s still %d:\n%s", what, m.Name, code, body)
	}
	ctx := context.Background()
	if err := l.Partition(ctx, "apiserver-2", lab.PartitionEtcd); err != nil {
		t.Fatal(err)
	}
	wait("partitioned from etcd", func(code int, body string) bool {
		return code == http.StatusInternalServerError && strings.Contains(body, "[-]etcd")
	})
	if err := l.Heal(ctx, "apiserver-2"); err != nil {
		t.Fatal(err)
	}
	wait("healed", func(code int, _ string) bool { return code == http.StatusOK })
	if err := l.Partition(ctx, "apiserver-9", lab.PartitionLB); err == nil {
		t.Error("partition of a member that does not exist succeeded")
	}
}
