// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package proc

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStartTailStop(t *testing.T) {
	log := filepath.Join(t.TempDir(), "p.log")
	// The shell ignores SIGTERM, so Stop must fall back to SIGKILL after the grace period.
	p, err := Start(Spec{Name: "sh", Bin: "/bin/sh", Args: []string{"-c", "trap '' TERM; echo one; echo two; exec sleep 30"}, LogFile: log})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for Tail(log, 1) != "two" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := Tail(log, 1); got != "two" {
		t.Errorf("Tail(1) = %q, want two", got)
	}
	if done, _ := p.Exited(); done {
		t.Fatal("exited early")
	}
	t0 := time.Now()
	StopAll([]*Proc{p, nil}, 200*time.Millisecond)
	if done, err := p.Exited(); !done || err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("after Stop: exited %v, %v; want killed", done, err)
	}
	if d := time.Since(t0); d < 200*time.Millisecond || d > 5*time.Second {
		t.Errorf("Stop took %s, want the grace period then SIGKILL", d)
	}
	if got := Tail(filepath.Join(t.TempDir(), "none"), 3); !strings.Contains(got, "no log") {
		t.Errorf("Tail of a missing file = %q", got)
	}
}
