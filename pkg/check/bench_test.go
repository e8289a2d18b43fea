// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check_test

import (
	"context"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// BenchmarkCheckLab is a full check (members, trust matrix, inventory) of a 3-member lab.
// It starts its own lab, so it runs only with CREDWATCH_BENCH_LAB=1 and the lab lock held
// (hack/bench-check.sh does both).
func BenchmarkCheckLab(b *testing.B) {
	l, eps := labtest.StartBench(b, "hack/bench-check.sh", lab.Options{Members: 3})
	cfg := check.Config{REST: l.RESTConfig(), Endpoints: eps, CreateProbeSA: true}
	if _, err := check.Fetch(context.Background(), cfg); err != nil { // creates the probe account
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		snap, err := check.Fetch(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if r := check.Run(snap, check.Registry()); r.Partial || len(r.Findings) > 0 {
			b.Fatalf("partial=%v findings=%+v", r.Partial, r.Findings)
		}
	}
}

// BenchmarkCheckRollLab is check in the middle of a roll of a 5-member control plane: four
// members, a fifth joining (added, its first seconds), and one whose etcd member was removed
// while its apiserver runs on behind a balancer that sends to every member (the storage-less
// window of a KubeadmControlPlane scale-down): the matrix on, every call bounded by a 2-s
// timeout. The goal: at most 1 s on a healthy roll, and the storage-less member costing one
// timeout, not one per call. Reported: ns/op, worst-ms (the slowest check) and timeouts (that
// worst in units of the timeout: at most about 1 with a storage-less member). Like
// BenchmarkCheckLab it runs only from hack/bench-check.sh (CREDWATCH_BENCH_LAB=1).
func BenchmarkCheckRollLab(b *testing.B) {
	l, _ := labtest.StartBench(b, "hack/bench-check.sh", lab.Options{Members: 4, LBMode: lab.LBAll})
	ctx := context.Background()
	const timeout = 2 * time.Second
	endpoints := func() []string {
		var eps []string
		for _, m := range l.Members() {
			eps = append(eps, m.URL)
		}
		return eps
	}
	cfg := check.Config{REST: l.RESTConfig(), CreateProbeSA: true, Timeout: timeout}
	cfg.Endpoints = endpoints()
	if _, err := check.Fetch(ctx, cfg); err != nil { // creates the probe account
		b.Fatal(err)
	}
	// run checks the lab's current members; broken: the check must raise a finding (the
	// storage-less member), else none.
	run := func(b *testing.B, broken bool) {
		cfg.Endpoints = endpoints()
		var worst time.Duration
		for b.Loop() {
			start := time.Now()
			snap, err := check.Fetch(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			r := check.Run(snap, check.Registry())
			worst = max(worst, time.Since(start))
			if !broken && len(r.Findings) > 0 {
				b.Fatalf("healthy roll: findings %+v", r.Findings)
			}
			if broken && len(r.Findings) == 0 {
				b.Fatal("a storage-less member behind the balancer: no finding")
			}
		}
		b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
		b.ReportMetric(float64(worst)/float64(timeout), "timeouts")
		b.ReportMetric(float64(len(cfg.Endpoints)), "members")
	}
	if _, err := l.AddMember(ctx, lab.MemberOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Run("five-members-healthy", func(b *testing.B) { run(b, false) })
	victim := l.Members()[0].Name
	if err := l.RemoveMember(ctx, victim, lab.RemoveOptions{EtcdFirst: true, KeepAPIServer: true}); err != nil {
		b.Fatal(err)
	}
	b.Run("one-storage-less", func(b *testing.B) { run(b, true) })
}
