// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRetry401: a request to the cluster endpoint answered 401 is sent again (body included) on a
// new connection, at most clusterTries times in all.
func TestRetry401(t *testing.T) {
	var calls, conns atomic.Int32
	rejections := int32(2)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if body, _ := io.ReadAll(r.Body); r.Method == http.MethodPost && string(body) != "payload" {
			t.Errorf("call %d: body %q", n, body)
		}
		if n <= rejections {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	hc := &http.Client{Transport: retry401{http.DefaultTransport}}
	resp, err := hc.Post(srv.URL, "text/plain", strings.NewReader("payload"))
	if err != nil || resp.StatusCode != http.StatusCreated || calls.Load() != 3 || conns.Load() != 3 {
		t.Fatalf("after 2 × 401: %v %v, %d calls on %d connections; want 201 after 3 calls on 3", resp, err, calls.Load(), conns.Load())
	}
	calls.Store(0)
	rejections = 100
	resp, err = hc.Get(srv.URL)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || calls.Load() != clusterTries {
		t.Fatalf("always 401: %v %v after %d calls, want 401 after %d", resp, err, calls.Load(), clusterTries)
	}
}
