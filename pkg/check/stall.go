// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// stallAfter (times Config.Timeout) is how long a fetch waits for the first answer to an API
// call before it stops.
const stallAfter = 2

// stall is a fetch's whole-run bound for a cluster that answers /version and then nothing. Every
// client of the fetch (the members' included) reports each HTTP answer to an API path; if none
// came within stallAfter×Timeout of the start, the fetch's context is cancelled and every call
// still waiting ends at once. Without it such a server costs one timeout per call made one after
// the other, and the inventory's lists wait six timeouts each before falling back to two more:
// 45–55 s at --timeout 5s (issue 37).
//
// It is not a per-host breaker: any answer from anywhere disarms it. Behind a load balancer
// that sends some calls to a member without storage (the first field report's chain), the other
// members' answers keep the fetch going, and every call's own timeout applies as before.
type stall struct {
	answered atomic.Bool
	fired    atomic.Bool
	after    time.Duration
}

// errStalled is the cause of a fetch stopped by its stall bound.
type errStalled struct{ after time.Duration }

func (e errStalled) Error() string {
	return fmt.Sprintf("not answered: the cluster answered no API call within %s (only /version or health checks, if anything), so the rest of this run was not waited for", e.after)
}

// arm returns ctx, cancelled with errStalled when no API call has been answered after s.after,
// and the function that releases it.
func (s *stall) arm(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	t := time.AfterFunc(s.after, func() {
		if !s.answered.Load() {
			s.fired.Store(true)
			cancel(errStalled{s.after})
		}
	})
	return ctx, func() { t.Stop(); cancel(nil) }
}

// wrap is rest.Config.Wrap's shape.
func (s *stall) wrap(rt http.RoundTripper) http.RoundTripper { return &stallRT{s: s, rt: rt} }

type stallRT struct {
	s  *stall
	rt http.RoundTripper
}

func (t *stallRT) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err == nil && resp != nil && apiPath(req.URL.Path) {
		t.s.answered.Store(true)
	}
	return resp, err
}

// WrappedRoundTripper lets client-go reach the inner transport (to cancel requests).
func (t *stallRT) WrappedRoundTripper() http.RoundTripper { return t.rt }

// apiPath says whether p is an API call that needs the member's storage, not /version or a
// health check, which a member without its etcd still answers.
func apiPath(p string) bool {
	return strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/apis/") || p == "/api" || p == "/apis"
}

// explain replaces "context canceled" in a recorded reason by what stopped the fetch, once the
// stall bound has fired; a reason the caller's own cancellation caused is left as it is.
func (s *stall) explain(reason string) string {
	if !s.fired.Load() || !strings.Contains(reason, context.Canceled.Error()) {
		return reason
	}
	return errStalled{s.after}.Error()
}
