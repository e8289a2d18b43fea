// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestPresent: a member that answers 401 to credwatch's own token is named by its certificate,
// and the probe tokens are presented to it directly.
func TestPresent(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer accepted" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`))
			return
		}
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/selfsubjectreviews") {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","status":{"userInfo":{"username":"system:serviceaccount:ns:probe"}}}`))
	}))
	defer srv.Close()
	c := &Config{Timeout: 5 * time.Second, ServerName: "example.com"}
	base := &rest.Config{BearerToken: "own", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	cn := &conns{}
	defer cn.close()
	mc, err := newMemberClient(base, srv.URL, c, cn)
	if err != nil {
		t.Fatal(err)
	}
	m := &Member{Endpoint: Endpoint{Name: "m", URL: srv.URL}}
	probeMember(context.Background(), c, mc, m)
	if m.Reachable || !m.rejectsUs { // (httptest's certificate has no CommonName to name it by)
		t.Fatalf("member after /version answered 401: reachable %v, rejectsUs %v", m.Reachable, m.rejectsUs)
	}
	if cell := present(context.Background(), c, mc, m, "accepted"); !cell.Accepted || cell.User != "system:serviceaccount:ns:probe" {
		t.Errorf("accepted token: %+v", cell)
	}
	if cell := present(context.Background(), c, mc, m, "rejected"); cell.Accepted || cell.Cause != causeClientUnauthorized {
		t.Errorf("rejected token: %+v", cell)
	}
	if f := checkMembers(&Snapshot{Members: []Member{*m}}); len(f) != 1 || !strings.Contains(f[0].Message, "rejects credwatch's own token") {
		t.Errorf("findings: %+v", f)
	}
}
