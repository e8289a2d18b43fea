// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// BenchmarkWatchIntervalLab is one watch interval (members, readiness, trust matrix, held
// tokens; /metrics every 15th interval as at --interval 1s) against a 3-member lab. It reports
// the CPU the process spent per interval and, from it, the share of one core a watch at
// --interval 1s costs. It starts its own lab, so it runs only with CREDWATCH_BENCH_LAB=1 and the
// lab lock held (hack/bench-watch.sh does both).
func BenchmarkWatchIntervalLab(b *testing.B) {
	l, eps := labtest.StartBench(b, "hack/bench-watch.sh", lab.Options{Members: 3})
	w, err := New(Config{Check: check.Config{REST: l.RESTConfig(), Endpoints: eps, CreateProbeSA: true, Timeout: time.Second},
		Interval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	w.step(ctx, 1, time.Now()) // creates the probe account, mints the held tokens
	cpu0 := cpuTime()
	b.ResetTimer()
	n := 1
	for b.Loop() {
		n++
		w.step(ctx, n, time.Now())
	}
	b.StopTimer()
	if s := w.Last(); len(s.Findings) > 0 || len(s.Held) != 9 {
		b.Fatalf("findings %+v, held cells %d", s.Findings, len(s.Held))
	}
	perInterval := (cpuTime() - cpu0) / time.Duration(b.N)
	b.ReportMetric(float64(perInterval.Microseconds())/1000, "cpu-ms/interval")
	b.ReportMetric(100*perInterval.Seconds(), "%core@1s")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWatchHangingFetch is TestWatchHangingFetchBounded on the wall clock: 8 intervals of
// 100 ms at a 60 ms timeout, the second fetch hanging until its deadline. It reports the largest
// slip (one timeout in theory; the rest is the machine's scheduling, which a unit test must not
// assert: on a busy 2-core machine it reached 98 ms).
func BenchmarkWatchHangingFetch(b *testing.B) {
	const interval, timeout = 100 * time.Millisecond, 60 * time.Millisecond
	var worst time.Duration
	for b.Loop() {
		calls := 0
		fetch := func(ctx context.Context, cfg check.MembersConfig) (*check.Snapshot, error) {
			calls++
			if calls == 2 {
				<-ctx.Done()
			}
			return fakeSnapshot(cfg, healthy), nil
		}
		w, err := New(Config{Check: check.Config{Timeout: timeout}, Interval: interval, Duration: 8 * interval, Fetch: fetch})
		if err != nil {
			b.Fatal(err)
		}
		worst = max(worst, w.Run(context.Background()).MaxSlip)
	}
	b.ReportMetric(float64(worst.Microseconds())/1000, "max-slip-ms")
	b.ReportMetric(float64((worst-timeout).Microseconds())/1000, "slip-beyond-timeout-ms")
}
