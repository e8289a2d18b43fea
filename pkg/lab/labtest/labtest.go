// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package labtest starts a lab (package lab) for a test: skipped under -short, fails with the make
// target when any binary the lab's options need is missing, torn down by t.Cleanup, member log
// tails dumped on failure.
package labtest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/lab"
)

// BinDir returns where the lab binaries are and whether the default-version ones exist.
func BinDir() (string, bool) {
	d := lab.DefaultBinDir()
	return d, lab.CheckBinaries(d, lab.Options{}.Needs()) == nil
}

// Start starts a lab with o for the test. Dir defaults to a fresh temporary directory, Log to
// t.Logf. The lab is stopped by t.Cleanup; if the test failed, the last lines of every member's
// log are logged first.
func Start(t testing.TB, o lab.Options) *lab.Lab {
	t.Helper()
	if testing.Short() {
		t.Skip("lab test: skipped under -short")
	}
	if o.BinDir == "" {
		o.BinDir = lab.DefaultBinDir()
	}
	// Every binary the options need, kube-controller-manager included: a missing one fails the
	// test; it never quietly shrinks what the test covers.
	if err := lab.CheckBinaries(o.BinDir, o.Needs()); err != nil {
		t.Fatal(err)
	}
	if o.Dir == "" {
		o.Dir = shortTempDir(t)
	}
	if o.Log == nil {
		o.Log = logWriter{t}
	}
	l, err := lab.Up(context.Background(), o)
	if err != nil {
		t.Fatalf("lab up: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			DumpLogs(t, l, 30)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := l.Down(ctx); err != nil {
			t.Errorf("lab down: %v", err)
		}
	})
	return l
}

// WaitEndpointSlice waits (up to 90 s) until the kubernetes EndpointSlice lists want addresses: a
// member writes itself there shortly after it is ready.
// It returns when the slice reached want, for tests that measure how long a member stayed listed.
// Each attempt asks the members directly, each with a short timeout, and takes the first answer:
// through the load balancer one kept connection can be pinned to a member whose etcd member is
// gone, and then every request on it hangs.
func WaitEndpointSlice(t testing.TB, l *lab.Lab, want int) time.Time {
	t.Helper()
	var members []kubernetes.Interface
	for _, m := range l.Members() {
		cfg := l.MemberRESTConfig(m.Name)
		cfg.Timeout = 3 * time.Second
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, cs)
	}
	got := -1
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if n, ok := endpointSliceAddresses(members); ok {
			got = n
			if got == want {
				return time.Now()
			}
		}
	}
	t.Fatalf("the kubernetes EndpointSlice lists %d addresses after 90 s (-1: no member answered), want %d", got, want)
	return time.Time{}
}

// endpointSliceAddresses counts the kubernetes EndpointSlice's addresses as the first member to
// answer sees them.
func endpointSliceAddresses(members []kubernetes.Interface) (int, bool) {
	for _, cs := range members {
		es, err := cs.DiscoveryV1().EndpointSlices("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
		if err != nil {
			continue
		}
		n := 0
		for _, ep := range es.Endpoints {
			n += len(ep.Addresses)
		}
		return n, true
	}
	return 0, false
}

// DumpLogs logs the last n lines of every process's log.
func DumpLogs(t testing.TB, l *lab.Lab, n int) {
	t.Helper()
	for _, name := range l.LogNames() {
		t.Logf("--- last %d lines of %s ---\n%s", n, name, l.LogTail(name, n))
	}
}

// shortTempDir is t.TempDir, or a shorter directory under /tmp when the test name makes the path
// too long for the supervisor's unix socket.
func shortTempDir(t testing.TB) string {
	d := t.TempDir()
	if len(d) < 80 {
		return d
	}
	d, err := os.MkdirTemp("", "lab")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return filepath.Clean(d)
}

// Log is an io.Writer that logs each write as one line of t's log (progress of a lab or node).
func Log(t testing.TB) io.Writer { return logWriter{t} }

type logWriter struct{ t testing.TB }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", trimNL(p))
	return len(p), nil
}

func trimNL(p []byte) []byte {
	for len(p) > 0 && p[len(p)-1] == '\n' {
		p = p[:len(p)-1]
	}
	return p
}

// StartBench starts a lab for a benchmark that needs one, and returns it with its members' URLs.
// It skips unless CREDWATCH_BENCH_LAB is set: script (hack/bench-*.sh) sets it and holds the lab
// lock, so benchmarks never start labs under `go test -bench .` by accident.
func StartBench(b *testing.B, script string, o lab.Options) (*lab.Lab, []string) {
	b.Helper()
	if os.Getenv("CREDWATCH_BENCH_LAB") == "" {
		b.Skipf("starts a lab: run %s (sets CREDWATCH_BENCH_LAB=1 and holds the lab lock)", script)
	}
	l := Start(b, o)
	var eps []string
	for _, m := range l.Members() {
		eps = append(eps, m.URL)
	}
	return l, eps
}
