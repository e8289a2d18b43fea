// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// TestIntegrationControllerRestarts kills the lab's kube-controller-manager: like the kubelet
// with a static pod, the lab starts it again after the back-off (10 s), and the status counts the
// restart and says how the last run ended.
func TestIntegrationControllerRestarts(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 1, Network: lab.NetworkLoopback, WithControllerManager: true})
	ctx := context.Background()
	before := l.Status(ctx, false).ControllerManager
	if before == nil || !before.Running || before.Restarts != 0 {
		t.Fatalf("controller manager before the kill: %+v", before)
	}
	if err := syscall.Kill(before.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	deadline := killed.Add(30 * time.Second)
	var after *lab.ProcStatus
	for time.Now().Before(deadline) {
		after = l.Status(ctx, false).ControllerManager
		if after != nil && after.Restarts == 1 && after.Running {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if after == nil || after.Restarts != 1 || !after.Running || after.PID == before.PID {
		t.Fatalf("controller manager 30 s after SIGKILL: %+v (before: pid %d)", after, before.PID)
	}
	if waited := time.Since(killed); waited < 9*time.Second {
		t.Errorf("restarted %s after the kill, before the kubelet's 10 s back-off", waited.Round(time.Millisecond))
	}
	if after.LastExit != "signal: killed" {
		t.Errorf("last exit %q, want signal: killed", after.LastExit)
	}
	if !l.ControllerManagerRunning() {
		t.Error("ControllerManagerRunning() = false after the restart")
	}
	// The new instance takes the lease once the dead one's has gone unrenewed for a lease
	// duration (15 s) as the new one observes it, counted from its own start (which, on a loaded
	// machine, can take tens of seconds): check names it. The deadline is generous on purpose; the
	// test asserts what check says, not how fast a controller manager starts.
	cfg := check.Config{REST: l.RESTConfig(), Endpoints: []string{l.Members()[0].URL}}
	var got []string
	var leases []check.Lease
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		snap, err := check.Fetch(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		leases = snap.Leases
		got = got[:0]
		for _, f := range check.Run(snap, check.Registry()).Findings {
			got = append(got, f.ID+" "+f.Message)
			if f.ID == "controller-restarted" && strings.Contains(f.Message, "kube-controller-manager took its lease") {
				return
			}
		}
	}
	t.Errorf("no controller-restarted finding within 3 min of the restart; leases %+v; findings: %q", leases, got)
}
