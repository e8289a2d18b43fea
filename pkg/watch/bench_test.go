package watch

import (
	"context"
	"os"
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
	if os.Getenv("CREDWATCH_BENCH_LAB") == "" {
		b.Skip("starts a lab: run hack/bench-watch.sh (sets CREDWATCH_BENCH_LAB=1 and holds the lab lock)")
	}
	l := labtest.Start(b, lab.Options{Members: 3})
	var eps []string
	for _, m := range l.Members() {
		eps = append(eps, m.URL)
	}
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
