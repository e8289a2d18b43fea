// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lb

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The three checks against backends that fail at each layer: a TLS server whose /readyz says 500
// (an apiserver without etcd) passes tcp and tls and fails https-readyz; a plain TCP listener
// passes tcp only; a closed port fails all three.
func TestHealthChecks(t *testing.T) {
	sick := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "[-]etcd failed: reason withheld", http.StatusInternalServerError)
	}))
	defer sick.Close()
	well := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer well.Close()
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	go func() {
		for {
			c, err := plain.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	gone, _ := net.Listen("tcp", "127.0.0.1:0")
	goneAddr := gone.Addr().String()
	_ = gone.Close()
	tlsConf := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // test servers' own certificates
	host := func(u string) string { return strings.TrimPrefix(u, "https://") }
	tests := []struct {
		backend string
		addr    string
		want    map[HealthCheck]bool
	}{
		{"ready apiserver", host(well.URL), map[HealthCheck]bool{CheckTCP: true, CheckTLS: true, CheckHTTPSReadyz: true}},
		{"apiserver without etcd", host(sick.URL), map[HealthCheck]bool{CheckTCP: true, CheckTLS: true, CheckHTTPSReadyz: false}},
		{"TCP only", plain.Addr().String(), map[HealthCheck]bool{CheckTCP: true, CheckTLS: false, CheckHTTPSReadyz: false}},
		{"closed port", goneAddr, map[HealthCheck]bool{CheckTCP: false, CheckTLS: false, CheckHTTPSReadyz: false}},
	}
	for _, tt := range tests {
		for _, h := range HealthChecks() {
			check, err := NewCheck(h, tlsConf)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			got := check(ctx, tt.addr)
			cancel()
			if got != tt.want[h] {
				t.Errorf("%s on %s = %v, want %v", h, tt.backend, got, tt.want[h])
			}
		}
	}
	if _, err := NewCheck("icmp", nil); err == nil || !strings.Contains(err.Error(), `health check "icmp": want tcp, tls or https-readyz`) {
		t.Errorf("NewCheck(icmp) = %v", err)
	}
}

// A backend leaves rotation after UnhealthyAfter failures in a row and comes back after
// HealthyAfter passes in a row; a streak that breaks starts over.
func TestJudgeCountsInARow(t *testing.T) {
	b := &backend{}
	b.healthy.Store(true)
	var got []bool
	for _, ok := range []bool{false, false, true, false, false, false, true, true, false, true, true} {
		b.judge(ok, 3, 2)
		got = append(got, b.healthy.Load())
	}
	want := []bool{true, true, true, true, true, false, false, true, true, true, true}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("health after each check %v, want %v", got, want)
		}
	}
}
