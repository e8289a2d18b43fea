// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
)

// breaker ends a fetch's waiting on a host that has stopped answering: once a request to a host
// has timed out without an answer, the requests of the same fetch still waiting on that host
// are cancelled and every later one fails at once, with an error that says so. A server that
// answers /version and then nothing would otherwise cost one timeout per call made one after
// the other (14 of them: 45–55 s at --timeout 5s), and the inventory's lists, which wait longer
// than one call's timeout, would each wait out their own bound. The next fetch (watch's next
// interval) starts with every host untried.
type breaker struct {
	mu    sync.Mutex
	hosts map[string]*hostState
}

type hostState struct {
	ctx    context.Context // cancelled, with the timeout's error as its cause, when the host trips
	cancel context.CancelCauseFunc
}

// wrap is rest.Config.Wrap's shape.
func (b *breaker) wrap(rt http.RoundTripper) http.RoundTripper { return &breakerRT{b: b, rt: rt} }

// host returns the state of host, made on first use.
func (b *breaker) host(host string) *hostState {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hosts == nil {
		b.hosts = map[string]*hostState{}
	}
	h := b.hosts[host]
	if h == nil {
		h = &hostState{}
		h.ctx, h.cancel = context.WithCancelCause(context.Background())
		b.hosts[host] = h
	}
	return h
}

// close releases every host's context once the fetch is done.
func (b *breaker) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, h := range b.hosts {
		h.cancel(nil)
	}
	b.hosts = nil
}

type breakerRT struct {
	b  *breaker
	rt http.RoundTripper
}

func (t *breakerRT) RoundTrip(req *http.Request) (*http.Response, error) {
	h := t.b.host(req.URL.Host)
	if h.ctx.Err() != nil {
		return nil, fmt.Errorf("not sent: %w", context.Cause(h.ctx))
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	stop := context.AfterFunc(h.ctx, func() { cancel(context.Cause(h.ctx)) })
	resp, err := t.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		stop()
		cancel(nil)
		if timedOut(req, err) {
			h.cancel(fmt.Errorf("an earlier call to %s timed out", req.URL.Host))
		}
	}
	return resp, err // the body is read under ctx: a trip while it is read ends that read too
}

// WrappedRoundTripper lets client-go reach the inner transport (to cancel requests).
func (t *breakerRT) WrappedRoundTripper() http.RoundTripper { return t.rt }

// timedOut says whether err ended req because its deadline passed (the per-call timeout), not
// because the caller cancelled it (a signal).
func timedOut(req *http.Request, err error) bool {
	if errors.Is(req.Context().Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
