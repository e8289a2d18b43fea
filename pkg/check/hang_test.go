// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestFetchHangingServer: a server that answers /version and then nothing costs a fetch about
// one timeout, not one per call it would have made (14 in a row: 45–55 s at --timeout 5s). The
// loopback server tests the client's behaviour, not API semantics.
func TestFetchHangingServer(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"gitVersion":"v1.36.3"}`))
			return
		}
		<-r.Context().Done() // until the client gives up
	}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	const timeout = 300 * time.Millisecond
	start := time.Now()
	snap, err := Fetch(context.Background(), Config{REST: &rest.Config{Host: srv.URL, BearerToken: "x",
		TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, Endpoints: []string{srv.URL}, Timeout: timeout})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	// Two timeouts in a row (a fetch and the member call after it) and slack for a busy machine.
	if elapsed > 4*timeout+time.Second {
		t.Errorf("fetch took %v at a %v timeout; sources %v", elapsed, timeout, snap.Sources)
	}
	t.Logf("fetch took %v at a %v timeout", elapsed, timeout)
}
