// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// BenchmarkLabUp measures `lab up` with 3 apiservers and 3 etcd members (cached binaries) and
// the sum of the lab processes' resident memory once every member is ready.
// Run holding the lab lock: flock /tmp/credwatch-lab.lock go test -run '^$' -bench LabUp -benchtime 1x ./pkg/lab/
func BenchmarkLabUp(b *testing.B) {
	if _, ok := labtest.BinDir(); !ok {
		b.Fatal("lab binaries missing: run make lab-binaries")
	}
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		l, err := lab.Up(context.Background(), lab.Options{Dir: b.TempDir(), Members: 3, EtcdMembers: 3})
		if err != nil {
			b.Fatal(err)
		}
		up := time.Since(t0)
		time.Sleep(5 * time.Second) // settle after start-up before reading RSS
		rss := int64(0)
		for _, pid := range l.Status(context.Background(), false).PIDs() {
			rss += rssBytes(pid)
		}
		b.ReportMetric(up.Seconds(), "up-s")
		b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
		if err := l.Down(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// rssBytes reads VmRSS of pid from /proc.
func rssBytes(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}
