// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/credwatch/credwatch/pkg/check"
)

const ownID = "own-requests-refused"

func ownCleared(e Event) bool { return e.Kind == FindingCleared && e.ID == ownID }

// An interval whose own requests are refused (401) or time out raises own-requests-refused, and
// the next one, answered, clears it: the finding is not carried, not even into an interval that
// does not read /metrics.
func TestWatchOwnRequestsRaisedAndCleared(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		failAt       int
		metricsEvery int
		fail         func(*check.Snapshot)
		says         string
	}{
		{"401", 2, 1, func(s *check.Snapshot) {
			s.Sources[check.SrcEndpointSlices] = check.ReasonOf(fmt.Errorf("list EndpointSlices of default/kubernetes: %w", apierrors.NewUnauthorized("Unauthorized")))
		}, "endpointslices were refused with 401 (list EndpointSlices of default/kubernetes: Unauthorized)"},
		{"timeout, cleared without /metrics", 3, 2, func(s *check.Snapshot) {
			s.Matrix, s.Tokens = nil, nil
			s.Sources[check.SrcMatrix] = `get probe service account credwatch/credwatch-probe: Get "https://10.96.0.1:443/api/v1/namespaces/credwatch/serviceaccounts/credwatch-probe?timeout=1s": context deadline exceeded`
		}, "trust-matrix timed out (get probe service account"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			fetch := func(_ context.Context, cfg check.MembersConfig) (*check.Snapshot, error) {
				calls++
				s := fakeSnapshot(cfg, healthy)
				if calls == tt.failAt {
					tt.fail(s)
				}
				return s, nil
			}
			rec, _ := runFetchEvery(t, tt.failAt+2, tt.metricsEvery, fetch)
			n, e := rec.first(func(e Event) bool { return e.Kind == FindingRaised && e.ID == ownID })
			if n != tt.failAt || e.Severity != "warning" || !strings.Contains(e.Message, tt.says) {
				t.Errorf("raised in interval %d (%+v), want %d saying %q", n, e, tt.failAt, tt.says)
			}
			if n, e := rec.first(ownCleared); n != tt.failAt+1 {
				t.Errorf("cleared in interval %d (%+v), want %d", n, e, tt.failAt+1)
			}
		})
	}
}

// The watcher's own reads beside the fetch are judged too: the Cluster API view (--capi-cluster)
// and the static pods' logs (--pod-logs).
func TestWatchOwnRequestsOfItsOwnReads(t *testing.T) {
	t.Parallel()
	var interval atomic.Int32 // counted before each interval's reads start
	fetch := func(_ context.Context, cfg check.MembersConfig) (*check.Snapshot, error) {
		s := fakeSnapshot(cfg, healthy)
		for i := range s.Members {
			s.Members[i].StaticPod = "kube-system/kube-apiserver-" + s.Members[i].Name
		}
		return s, nil
	}
	read := func(context.Context) (*check.ClusterAPI, error) {
		if interval.Load() == 2 {
			return nil, fmt.Errorf("get KubeadmControlPlane default/w1: %w", apierrors.NewServiceUnavailable(""))
		}
		return nil, nil
	}
	cs := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kube-apiserver-cp-1", Namespace: "kube-system",
		Labels: map[string]string{"component": "kube-apiserver"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-apiserver"}}}})
	cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if interval.Load() == 3 {
			return true, nil, apierrors.NewTimeoutError("request did not complete within requested timeout - context deadline exceeded", 0)
		}
		return false, nil, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	stop := ObserverFunc(func(*State, []Event) {
		if len(rec.states) >= 4 {
			cancel()
		}
	})
	w, err := New(Config{Check: check.Config{Timeout: time.Second}, Interval: 10 * time.Millisecond, MetricsEvery: 1,
		Endpoints: func() []string { interval.Add(1); return nil },
		Fetch:     fetch, ClusterAPI: read, PodLogs: true, Observers: []Observer{rec, stop}})
	if err != nil {
		t.Fatal(err)
	}
	w.pods = newPodLogs(cs.CoreV1().Pods("kube-system"))
	w.Run(ctx)
	if len(rec.states) != 4 {
		t.Fatalf("%d intervals ran, want 4", len(rec.states))
	}
	for i, want := range []string{"", "cluster-api got a server error (get KubeadmControlPlane default/w1 (HTTP 503))",
		`pod-logs timed out (follow kube-apiserver pod logs: list pods "component=kube-apiserver": Timeout: request did not complete within requested timeout - context deadline exceeded)`, ""} {
		var got string
		for _, f := range rec.states[i].Findings {
			if f.ID == ownID {
				got = f.Message
			}
		}
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("interval %d: own-requests-refused says %q, want %q", i+1, got, want)
		}
	}
	if n, _ := rec.first(ownCleared); n != 4 {
		t.Errorf("cleared in interval %d, want 4", n)
	}
}
