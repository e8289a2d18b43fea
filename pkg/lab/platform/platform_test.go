// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package platform

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestRun leads, writes and summarizes on a fake clientset (the logic only; the lab runs it on
// real clusters). It ends after the third write, however long the machine takes to get there.
func TestRun(t *testing.T) {
	cs := fake.NewClientset()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var writes atomic.Int32
	cs.PrependReactor("*", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if (a.GetVerb() == "update" || a.GetVerb() == "create") && writes.Add(1) >= 3 {
			cancel()
		}
		return false, nil, nil
	})
	var out bytes.Buffer
	err := Run(ctx, Config{Name: "flux", Namespace: "platform", Pod: "flux-1", Interval: 10 * time.Millisecond,
		RetryPeriod: 10 * time.Millisecond}, cs, &out)
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
	if got[EventStarted] != 1 || got[EventLeading] != 1 || last.Event != EventSummary || last.Pod != "flux-1" {
		t.Errorf("events %v, last %+v", got, last)
	}
	if n := writes.Load(); last.Writes+last.Errors < 2 || n < 3 {
		t.Errorf("%d writes seen, the summary counts %d ok and %d failed", n, last.Writes, last.Errors)
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
