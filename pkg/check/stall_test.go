// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestFetchStalledServer: a server that answers /version and then nothing stops the fetch once
// no API call has been answered within two timeouts, and every source says so. How long it
// takes is BenchmarkFetchStalledServer's to measure; the test asserts the outcome and that the
// server saw no call after the bound fired. The loopback server tests the client's behaviour,
// not API semantics.
func TestFetchStalledServer(t *testing.T) {
	var afterStop atomic.Int64
	var stopped atomic.Bool
	srv := stalledServer(t, &stopped, &afterStop)
	snap, err := Fetch(context.Background(), Config{REST: &rest.Config{Host: srv.URL, BearerToken: "x",
		TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, Endpoints: []string{srv.URL}, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The inventory's cache reads (six timeouts each) are the ones the bound cuts short; a read
	// bounded by one timeout may end on its own deadline first, which it then says.
	for _, src := range []string{SrcPods, SrcSecrets} {
		if got := snap.Sources[src]; !strings.Contains(got, "answered no API call within 600ms") {
			t.Errorf("source %s: %q, want the stall bound named", src, got)
		}
	}
	for src, why := range snap.Sources {
		if strings.Contains(why, "context canceled") {
			t.Errorf("source %s: %q: a cancelled call must say what cancelled it", src, why)
		}
	}
	stopped.Store(true)
	if n := afterStop.Load(); n > 0 {
		t.Errorf("%d calls reached the server after the fetch returned", n)
	}
}

// TestFetchStallDisarmed: one answered API call keeps the bound from firing, however slow the
// rest is (a load balancer in front of one member without storage and one with).
func TestFetchStallDisarmed(t *testing.T) {
	st := &stall{after: 50 * time.Millisecond}
	ctx, release := st.arm(context.Background())
	defer release()
	st.answered.Store(true)
	select {
	case <-ctx.Done():
		t.Fatal("an answered fetch was stopped")
	case <-time.After(200 * time.Millisecond):
	}
	if got := st.explain("list pods: context canceled"); got != "list pods: context canceled" {
		t.Errorf("explain without a stall: %q", got)
	}
}

func TestAPIPath(t *testing.T) {
	for p, want := range map[string]bool{"/api/v1/pods": true, "/apis/apps/v1": true, "/api": true,
		"/version": false, "/readyz": false, "/livez": false, "/healthz": false, "/metrics": false, "/apiary": false} {
		if got := apiPath(p); got != want {
			t.Errorf("apiPath(%q) = %v, want %v", p, got, want)
		}
	}
}

// BenchmarkFetchStalledServer measures a fetch against a server that answers only /version at
// a 300 ms timeout (before the bound: 3.4 s, eleven timeouts one after the other).
func BenchmarkFetchStalledServer(b *testing.B) {
	var n atomic.Int64
	var stopped atomic.Bool
	srv := stalledServer(b, &stopped, &n)
	for b.Loop() {
		if _, err := Fetch(context.Background(), Config{REST: &rest.Config{Host: srv.URL, BearerToken: "x",
			TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, Endpoints: []string{srv.URL}, Timeout: 300 * time.Millisecond}); err != nil {
			b.Fatal(err)
		}
	}
}

// stalledServer answers /version and holds every other call until the client gives up; once
// stopped is set it counts the calls that still arrive.
func stalledServer(tb testing.TB, stopped *atomic.Bool, after *atomic.Int64) *httptest.Server {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stopped.Load() {
			after.Add(1)
		}
		if r.URL.Path == "/version" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"gitVersion":"v1.36.3"}`))
			return
		}
		<-r.Context().Done() // until the client gives up
	}))
	tb.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv
}
