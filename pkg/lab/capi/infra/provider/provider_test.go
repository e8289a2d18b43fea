// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/controller"
	"github.com/credwatch/credwatch/pkg/lab/platform"
)

// The controller's progress lines become "log" events without their clock time, whole lines
// only, and the lab reads every line back as an event.
func TestLines(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	l := newLines(&out, "p-1")
	l.now = func() time.Time { return time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC) }
	l.emit(platform.Event{Event: platform.EventStarted})
	for _, w := range []string{
		"11:00:00.123 labcluster ns/w1: create-balancer (10.0.0.1:40001)\n11:00:01.000 lab",
		"machine ns/m1: create-host\n",
		"no clock here\n\n",
		"11:00:02.000 not ended",
	} {
		if n, err := fmt.Fprint(l, w); err != nil || n != len(w) {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	want := []platform.Event{
		{Event: platform.EventStarted},
		{Event: EventLog, Message: "labcluster ns/w1: create-balancer (10.0.0.1:40001)"},
		{Event: EventLog, Message: "labmachine ns/m1: create-host"},
		{Event: EventLog, Message: "no clock here"},
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), out.String())
	}
	for i, line := range got {
		e, ok := platform.ParseEvent([]byte(line))
		w := want[i]
		w.Time, w.Pod = l.now(), "p-1"
		if !ok || e != w {
			t.Errorf("line %d %s: parsed %+v, %v; want %+v", i, line, e, ok, w)
		}
	}
}

// A step's line holds the step, which ParseStep reads back; other lines are no steps.
func TestStepLines(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	at := time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC)
	l := newLines(&out, "p-1")
	l.now = func() time.Time { return at.Add(time.Second) }
	step := controller.Event{Time: at, Namespace: "default", Cluster: "w1", Machine: "w1-control-plane-abcde",
		Step: infra.Deregister, Detail: "the Machine is being deleted (drain); deregistration on-drain"}
	l.step(step)
	l.emit(platform.Event{Event: platform.EventLeading})
	_, _ = fmt.Fprintln(l, "11:00:02.000 labcluster default/w1: attempt 1 failed")
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), out.String())
	}
	got, ok := ParseStep([]byte(lines[0]))
	if !ok || got != step {
		t.Errorf("ParseStep(%s) = %+v, %v; want %+v", lines[0], got, ok, step)
	}
	e, ok := platform.ParseEvent([]byte(lines[0]))
	if want := "labmachine default/w1-control-plane-abcde of w1: deregister (the Machine is being deleted (drain); deregistration on-drain)"; !ok ||
		e.Event != EventStep || e.Message != want || e.Pod != "p-1" {
		t.Errorf("the step line as an event: %+v, %v; want message %q", e, ok, want)
	}
	for _, line := range append(lines[1:], "", "not json", `{"event":"step"`) {
		if _, ok := ParseStep([]byte(line)); ok {
			t.Errorf("ParseStep(%q) read a step", line)
		}
	}
	if strings.Contains(lines[1], `"step"`) {
		t.Errorf("an event's line carries a step: %s", lines[1])
	}
}

func TestRunNeedsIdentity(t *testing.T) {
	t.Parallel()
	for _, c := range []Config{{}, {Pod: "p-1"}, {LeaseNamespace: "capi-lab-system"}} {
		if err := Run(context.Background(), c, Clients{}, nil, nil); err == nil || !strings.Contains(err.Error(), "required") {
			t.Errorf("Run(%+v) = %v, want a required-field error", c, err)
		}
	}
	c := Config{Pod: "p-1", LeaseNamespace: "ns"}
	if err := c.complete(); err != nil || c.LeaseDuration != 15*time.Second || c.RenewDeadline != 10*time.Second || c.RetryPeriod != 2*time.Second {
		t.Errorf("complete = %v, %+v; want controller-runtime's leader-election defaults", err, c)
	}
}
