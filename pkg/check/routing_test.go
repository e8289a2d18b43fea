// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

func TestCheckRouting(t *testing.T) {
	ready := member("a", issA, kidA)
	ready.ServingCert = "cert-a"
	unready := member("b", issA, kidA)
	unready.ServingCert, unready.NotReady = "cert-b", []string{"etcd"}
	twin := member("c", issA, kidA)
	twin.ServingCert, twin.NotReady = "cert-b", []string{"etcd"}
	tests := []struct {
		name    string
		members []Member
		routing *Routing
		want    []string
	}{
		{"not probed", []Member{ready, unready}, nil, nil},
		{"sent to the unready member", []Member{ready, unready},
			&Routing{Server: "https://lb:6443", Tried: 4, Served: map[string]int{"cert-a": 2, "cert-b": 2}}, []string{"lb-sends-to-unready@b"}},
		{"only ready members served", []Member{ready, unready},
			&Routing{Server: "https://lb:6443", Tried: 4, Served: map[string]int{"cert-a": 4}}, nil},
		{"a certificate two members share is not attributed", []Member{ready, unready, twin},
			&Routing{Server: "https://lb:6443", Tried: 4, Served: map[string]int{"cert-b": 4}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range checkRouting(&Snapshot{Members: tt.members, Routing: tt.routing}) {
				got = append(got, f.ID+"@"+f.Member)
			}
			if len(got) != len(tt.want) || len(got) > 0 && got[0] != tt.want[0] {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNeedsRouting(t *testing.T) {
	ready := member("a", issA, kidA)
	unready := member("b", issA, kidA)
	unready.ServingCert, unready.NotReady = "cert-b", []string{"etcd"}
	tests := []struct {
		name    string
		members []Member
		server  string
		want    bool
	}{
		{"all ready", []Member{ready}, "https://lb:6443", false},
		{"one unready behind a load balancer", []Member{ready, unready}, "https://lb:6443", true},
		{"the server is a member", []Member{ready, unready}, "https://a:6443", false},
	}
	for _, tt := range tests {
		if got := needsRouting(tt.members, tt.server); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestProbeRouting(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	c := &Config{REST: &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca, ServerName: "example.com"}}, Timeout: 5 * time.Second}
	r := probeRouting(context.Background(), c, 3)
	if r.Tried != 3 || r.Failed != 0 || r.Served[certFingerprint(srv.Certificate())] != 3 {
		t.Errorf("routing %+v", r)
	}
}
