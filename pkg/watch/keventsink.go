// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
)

// unauthorizedTries bounds how often an Event write answered 401 is tried again.
const unauthorizedTries = 6

// retrySink tries an Event write again, on a new connection, when it was answered 401. In a pod
// the watcher's token is rejected by a member whose key drifted, and the kubernetes Service sends
// some of its requests there: the broadcaster would drop the Event ("server rejected event, will
// not retry") — the Warning about that very member. Every connection is closed after its request
// (closeConns), so each try is sent to a member afresh.
type retrySink struct {
	record.EventSink
	sleep time.Duration
}

func (s retrySink) Create(e *corev1.Event) (*corev1.Event, error) {
	return s.retry(func() (*corev1.Event, error) { return s.EventSink.Create(e) })
}

func (s retrySink) Update(e *corev1.Event) (*corev1.Event, error) {
	return s.retry(func() (*corev1.Event, error) { return s.EventSink.Update(e) })
}

func (s retrySink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	return s.retry(func() (*corev1.Event, error) { return s.EventSink.Patch(e, data) })
}

func (s retrySink) retry(write func() (*corev1.Event, error)) (*corev1.Event, error) {
	for try := 1; ; try++ {
		ev, err := write()
		if !apierrors.IsUnauthorized(err) || try == unauthorizedTries {
			return ev, err
		}
		time.Sleep(s.sleep)
	}
}

// closeConns makes every request of the Event client use a connection of its own, so that the
// Service's load balancing picks a member for each Event (there are few).
type closeConns struct{ rt http.RoundTripper }

func (c closeConns) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Close = true
	return c.rt.RoundTrip(req)
}

// WrappedRoundTripper lets client-go reach the inner transport.
func (c closeConns) WrappedRoundTripper() http.RoundTripper { return c.rt }
