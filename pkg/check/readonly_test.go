// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestReadOnlyFetch: a ReadOnly members fetch sends nothing but GETs, where the same fetch
// without it mints and reviews probe tokens (the probe service account exists).
func TestReadOnlyFetch(t *testing.T) {
	var mu sync.Mutex
	var writes []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodGet {
			mu.Lock()
			writes = append(writes, r.Method+" "+r.URL.Path)
			mu.Unlock()
			http.NotFound(w, r)
			return
		}
		switch p := r.URL.Path; {
		case p == "/version":
			_, _ = w.Write([]byte(`{"gitVersion":"v1.36.3"}`))
		case p == "/openid/v1/jwks":
			_, _ = w.Write([]byte(`{"keys":[]}`))
		case strings.HasSuffix(p, "/serviceaccounts/"+DefaultProbeName):
			_, _ = w.Write([]byte(`{"kind":"ServiceAccount","apiVersion":"v1","metadata":{"name":"` + DefaultProbeName + `"}}`))
		case strings.HasSuffix(p, "/endpointslices"), strings.HasSuffix(p, "/pods"):
			_, _ = w.Write([]byte(`{"kind":"List","apiVersion":"v1","items":[]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	for _, readOnly := range []bool{false, true} {
		writes = nil
		c := MembersConfig{Config: Config{REST: &rest.Config{Host: srv.URL, BearerToken: "x", TLSClientConfig: rest.TLSClientConfig{Insecure: true}},
			Endpoints: []string{srv.URL}, ServerName: "example.com", Timeout: 5 * time.Second}, SkipMetrics: true, FreshConnections: true, ReadOnly: readOnly}
		snap, err := FetchMembers(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Members) != 1 || !snap.Members[0].Reachable {
			t.Fatalf("readOnly %v: members %+v", readOnly, snap.Members)
		}
		switch {
		case readOnly && (len(writes) > 0 || snap.Matrix != nil || snap.Missing(SrcMatrix) == ""):
			t.Errorf("read-only fetch wrote %q (matrix %v, reason %q)", writes, snap.Matrix, snap.Missing(SrcMatrix))
		case !readOnly && len(writes) == 0:
			t.Error("the fetch without ReadOnly sent no TokenRequest: the test proves nothing")
		}
	}
}
