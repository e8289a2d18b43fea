// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package platform

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes/fake"
)

// TestRun leads, writes and summarizes on a fake clientset (the logic only; the lab runs it on
// real clusters).
func TestRun(t *testing.T) {
	cs := fake.NewClientset()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	err := Run(ctx, Config{Name: "flux", Namespace: "platform", Pod: "flux-1", Interval: 100 * time.Millisecond,
		RetryPeriod: 100 * time.Millisecond}, cs, &out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	var last Event
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		e, ok := ParseEvent(sc.Bytes())
		if !ok {
			t.Fatalf("not an event: %s", sc.Text())
		}
		got[e.Event]++
		last = e
	}
	if got[EventStarted] != 1 || got[EventLeading] != 1 || last.Event != EventSummary || last.Writes < 3 || last.Pod != "flux-1" {
		t.Errorf("events %v, last %+v", got, last)
	}
}

func TestParseEventAndFailure(t *testing.T) {
	for _, line := range []string{"", "I1207 06:00:00 leaderelection.go:1] failed to renew lease", "{}", "{bad"} {
		if _, ok := ParseEvent([]byte(line)); ok {
			t.Errorf("ParseEvent(%q) ok", line)
		}
	}
	err := fmt.Errorf("update: %w", apierrors.NewUnauthorized("Unauthorized"))
	e := failure(EventWriteError, err)
	if e.Status != 401 || e.Reason != "Unauthorized" {
		t.Errorf("failure = %+v", e)
	}
	if e := failure(EventListError, errors.New("context deadline exceeded")); e.Status != 0 || e.Message != "context deadline exceeded" {
		t.Errorf("failure = %+v", e)
	}
}

func FuzzParseEvent(f *testing.F) {
	f.Add([]byte(`{"t":"2026-12-07T06:00:00Z","pod":"p","event":"write-error","status":401}`))
	f.Fuzz(func(t *testing.T, b []byte) { ParseEvent(b) })
}
