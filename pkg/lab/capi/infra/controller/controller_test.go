// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package controller

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
)

func TestEndpointOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr string
		want infra.APIEndpoint
		err  bool
	}{
		{"127.0.0.1:43211", infra.APIEndpoint{Host: "127.0.0.1", Port: 43211}, false},
		{"[::1]:6443", infra.APIEndpoint{Host: "::1", Port: 6443}, false},
		{"127.0.0.1", infra.APIEndpoint{}, true},
		{"127.0.0.1:70000", infra.APIEndpoint{}, true},
	} {
		got, err := endpointOf(tc.addr)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("endpointOf(%q) = %+v, %v; want %+v, error %v", tc.addr, got, err, tc.want, tc.err)
		}
	}
}

// Waits are recorded once per run of them; Events is safe while steps are added.
func TestTimeline(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	clock := time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC)
	c, err := New(Options{Client: nil, Hosts: nil})
	if err == nil || c != nil {
		t.Fatal("New without a client and Hosts succeeded")
	}
	c = &Controller{timeline: timeline{log: &log, now: func() time.Time { return clock }}, last: map[string]infra.Step{}}
	for _, s := range []infra.Step{AddFinalizer, infra.WaitCluster, infra.WaitCluster, infra.WaitBootstrap, infra.WaitBootstrap, infra.CreateHost, infra.WaitCluster} {
		c.record("default/m", Event{Namespace: "default", Cluster: "w1", Machine: "m", Step: s})
	}
	var got []infra.Step
	for _, e := range c.Events() {
		got = append(got, e.Step)
	}
	want := []infra.Step{AddFinalizer, infra.WaitCluster, infra.WaitBootstrap, infra.CreateHost, infra.WaitCluster}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("steps %v, want %v", got, want)
	}
	if first := strings.SplitN(log.String(), "\n", 2)[0]; first != "01:00:00.000 labmachine default/m of w1: add-finalizer" {
		t.Errorf("first progress line %q", first)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(2)
		go func() { defer wg.Done(); c.record(fmt.Sprint(i), Event{Cluster: "w1", Step: CreateBalancer}) }()
		go func() { defer wg.Done(); _ = c.Events() }()
	}
	wg.Wait()
	if n := len(c.Events()); n != len(want)+4 {
		t.Errorf("%d events, want %d", n, len(want)+4)
	}
}

// With Options.Steps, the steps go to it, not to the log, and Events keeps them.
func TestTimelineSteps(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	var got []infra.Step
	c := &Controller{o: Options{Log: &log, Now: time.Now}, last: map[string]infra.Step{},
		timeline: timeline{log: &log, steps: func(e Event) { got = append(got, e.Step) }, now: time.Now}}
	c.record("default/m", Event{Namespace: "default", Machine: "m", Step: infra.CreateHost})
	c.logf("a progress line")
	if len(got) != 1 || got[0] != infra.CreateHost || len(c.Events()) != 1 {
		t.Errorf("steps %v, events %v; want the create-host step in both", got, c.Events())
	}
	if strings.Contains(log.String(), "create-host") || !strings.Contains(log.String(), "a progress line") {
		t.Errorf("log %q: want the progress line only", log.String())
	}
}
