// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
)

type flakySink struct {
	record.EventSink
	unauthorized, calls int
}

func (f *flakySink) Create(e *corev1.Event) (*corev1.Event, error) {
	f.calls++
	if f.calls <= f.unauthorized {
		return nil, apierrors.NewUnauthorized("Unauthorized")
	}
	return e, nil
}

// TestRetrySink: a write answered 401 (a member that rejects the watcher's token) is tried
// again, at most unauthorizedTries times; other errors are not.
func TestRetrySink(t *testing.T) {
	for _, tc := range []struct {
		unauthorized, calls int
		ok                  bool
	}{{0, 1, true}, {2, 3, true}, {unauthorizedTries, unauthorizedTries, false}} {
		f := &flakySink{unauthorized: tc.unauthorized}
		_, err := retrySink{EventSink: f}.Create(&corev1.Event{})
		if (err == nil) != tc.ok || f.calls != tc.calls {
			t.Errorf("%d × 401: err %v after %d calls, want ok %v after %d", tc.unauthorized, err, f.calls, tc.ok, tc.calls)
		}
	}
	f := &forbiddenSink{}
	if _, err := (retrySink{EventSink: f}).Create(&corev1.Event{}); err == nil || f.calls != 1 {
		t.Errorf("403: err %v after %d calls, want one call", err, f.calls)
	}
}

type forbiddenSink struct {
	record.EventSink
	calls int
}

func (f *forbiddenSink) Create(*corev1.Event) (*corev1.Event, error) {
	f.calls++
	return nil, apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "x", nil)
}
