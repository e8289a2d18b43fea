// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package proc

import (
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestBackoffNext(t *testing.T) {
	b := KubeletBackoff()
	tests := []struct {
		prev, ran, want time.Duration
	}{
		{0, time.Second, 10 * time.Second},
		{10 * time.Second, time.Second, 20 * time.Second},
		{160 * time.Second, time.Second, 5 * time.Minute},
		{5 * time.Minute, time.Second, 5 * time.Minute},
		{5 * time.Minute, 10 * time.Minute, 10 * time.Second},
	}
	for _, tt := range tests {
		if got := b.next(tt.prev, tt.ran); got != tt.want {
			t.Errorf("next(%s, ran %s) = %s, want %s", tt.prev, tt.ran, got, tt.want)
		}
	}
}

// A process that is killed comes back after the back-off, with a new pid; Stop ends it for good.
func TestRestarting(t *testing.T) {
	var mu sync.Mutex
	var waits []time.Duration
	started := make(chan *Proc, 4)
	spec := Spec{Name: "sh", Bin: "/bin/sh", Args: []string{"-c", "exec sleep 30"}, LogFile: filepath.Join(t.TempDir(), "p.log")}
	r, err := StartRestarting(spec, Backoff{Initial: 50 * time.Millisecond, Max: 80 * time.Millisecond, Reset: time.Hour}, RestartOptions{
		Started: func(p *Proc) { started <- p },
		Exited: func(_ error, wait time.Duration) {
			mu.Lock()
			waits = append(waits, wait)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	first := r.Current().PID()
	for i := 0; i < 3; i++ {
		_ = syscall.Kill(r.Current().PID(), syscall.SIGKILL)
		select {
		case p := <-started:
			if p.PID() == first {
				t.Fatalf("restart %d kept pid %d", i+1, first)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no restart %d", i+1)
		}
	}
	if n, last := r.Restarts(); n != 3 || last != "signal: killed" {
		t.Errorf("Restarts() = %d, %q; want 3, signal: killed", n, last)
	}
	mu.Lock()
	got := append([]time.Duration(nil), waits...)
	mu.Unlock()
	want := []time.Duration{50 * time.Millisecond, 80 * time.Millisecond, 80 * time.Millisecond}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("waits %v, want %v", got, want)
		}
	}
	r.Stop(time.Second)
	if r.Running() {
		t.Error("running after Stop")
	}
	select {
	case p := <-started:
		t.Errorf("started again after Stop: pid %d", p.PID())
	case <-time.After(200 * time.Millisecond):
	}
	var none *Restarting
	none.Stop(time.Second)
}
