// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package limits

import (
	"context"
	"io"
	"net/http"
	"strings"
)

// Transport returns rt with every response body bounded to max bytes: reading past it fails
// with a *TooLargeError naming the request's host and path, and a body that declares a larger
// Content-Length fails on its first read, before anything is read. Streams that are consumed as
// they come rather than held whole — pod logs and watches — and protocol upgrades pass unbounded;
// a path ending in /metrics is bounded by metricsMax instead (0: max).
func Transport(rt http.RoundTripper, max, metricsMax int64) http.RoundTripper {
	if metricsMax <= 0 {
		metricsMax = max
	}
	return &transport{rt: rt, max: max, metricsMax: metricsMax}
}

type transport struct {
	rt              http.RoundTripper
	max, metricsMax int64
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil || resp.Body == nil || resp.StatusCode == http.StatusSwitchingProtocols || streamed(req) {
		return resp, err
	}
	max := t.max
	if strings.HasSuffix(req.URL.Path, "/metrics") {
		max = t.metricsMax
	}
	resp.Body = &body{rc: resp.Body, left: max, declared: resp.ContentLength,
		err: &TooLargeError{Name: req.URL.Host + req.URL.Path, Max: max, Response: true}}
	return resp, nil
}

// WrappedRoundTripper lets client-go reach the inner transport (to cancel requests).
func (t *transport) WrappedRoundTripper() http.RoundTripper { return t.rt }

// streamKey marks a request's context as Streamed.
type streamKey struct{}

// Streamed returns ctx marking its requests' responses as streams the caller consumes as they
// come, holding one item at a time (check's inventory lists, decoded object by object, each
// bounded by the caller): they pass unbounded, like watches and logs.
func Streamed(ctx context.Context) context.Context { return context.WithValue(ctx, streamKey{}, true) }

// streamed says whether the response is read as a stream: a pod's log, a watch, or a request
// made with a Streamed context.
func streamed(req *http.Request) bool {
	if req.Context().Value(streamKey{}) != nil {
		return true
	}
	q := req.URL.Query()
	return strings.HasSuffix(req.URL.Path, "/log") || q.Get("watch") == "true" || q.Get("watch") == "1" || q.Get("follow") == "true"
}

// body is a response body that fails with err once more than its bound has been read.
type body struct {
	rc       io.ReadCloser
	left     int64 // bytes that may still be read
	declared int64 // Content-Length, -1 when unknown
	err      *TooLargeError
}

func (b *body) Read(p []byte) (int, error) {
	if b.declared > b.err.Max {
		return 0, b.err
	}
	if b.left < 0 {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte more than allowed tells a body of exactly the bound from a larger one
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), b.err
	}
	return n, err
}

func (b *body) Close() error { return b.rc.Close() }
