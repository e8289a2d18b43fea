// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/controller"
)

// fakeCloud answers from fixed values and records each call as one line; err, when set, is
// every call's error.
type fakeCloud struct {
	mu    sync.Mutex
	calls []string
	err   error
}

func (f *fakeCloud) record(format string, args ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	return f.err
}

func (f *fakeCloud) last() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return ""
	}
	return f.calls[len(f.calls)-1]
}

var fakeHost = controller.HostInfo{Name: "m1", Up: true, IP: netip.MustParseAddr("10.10.0.5"), Bootstrapped: true, Balancer: "ns/w1"}

func (f *fakeCloud) CreateHost(ctx context.Context, name string, bootstrap []byte, meta map[string]string) (controller.HostInfo, error) {
	// The creation goes on when the caller goes away: its context is never cancelled.
	return fakeHost, f.record("create %s %q %v done=%v", name, bootstrap, meta, ctx.Done() == nil)
}

func (f *fakeCloud) Host(_ context.Context, name string) (controller.HostInfo, error) {
	return fakeHost, f.record("host %s", name)
}

func (f *fakeCloud) DeleteHost(ctx context.Context, name string) error {
	return f.record("delete %s done=%v", name, ctx.Done() == nil)
}

func (f *fakeCloud) EnsureBalancer(_ context.Context, namespace, name string, spec infra.LabClusterSpec) (string, bool, error) {
	return "10.10.0.1:40001", true, f.record("ensure %s/%s %+v", namespace, name, spec)
}

func (f *fakeCloud) DeleteBalancer(_ context.Context, namespace, name string) (bool, error) {
	return true, f.record("delete-balancer %s/%s", namespace, name)
}

func (f *fakeCloud) Register(_ context.Context, namespace, name, host, addr string) error {
	return f.record("register %s/%s %s %s", namespace, name, host, addr)
}

func (f *fakeCloud) Deregister(_ context.Context, host string) error {
	return f.record("deregister %s", host)
}

const token = "s3cret"

// Every call goes through the client and the server to the cloud with its arguments, and its
// answer comes back; a failed call comes back as one line.
func TestClientServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	spec := infra.LabClusterSpec{ControlPlaneEndpoint: infra.APIEndpoint{Host: "10.10.0.1", Port: 40001},
		LoadBalancer: infra.LoadBalancer{HealthCheck: "tcp", Deregistration: infra.OnMachineDelete, IntervalSeconds: 2, UnhealthyThreshold: 1}}
	tests := []struct {
		name string
		call func(c *Client) (any, error)
		want any    // the answer
		seen string // the cloud's call
	}{
		{"create host", func(c *Client) (any, error) {
			return c.CreateHost(ctx, "m1", []byte("#cloud-config\n"), map[string]string{"instance_id": "u1"})
		}, fakeHost, `create m1 "#cloud-config\n" map[instance_id:u1] done=true`},
		{"host", func(c *Client) (any, error) { return c.Host(ctx, "m1") }, fakeHost, "host m1"},
		{"delete host", func(c *Client) (any, error) { return nil, c.DeleteHost(ctx, "m1") }, nil, "delete m1 done=true"},
		{"ensure balancer", func(c *Client) (any, error) {
			addr, created, err := c.EnsureBalancer(ctx, "ns", "w1", spec)
			return fmt.Sprint(addr, " ", created), err
		}, "10.10.0.1:40001 true", fmt.Sprintf("ensure ns/w1 %+v", spec)},
		{"delete balancer", func(c *Client) (any, error) { return c.DeleteBalancer(ctx, "ns", "w1") }, true, "delete-balancer ns/w1"},
		{"register", func(c *Client) (any, error) { return nil, c.Register(ctx, "ns", "w1", "m1", "10.10.0.5:6443") }, nil,
			"register ns/w1 m1 10.10.0.5:6443"},
		{"deregister", func(c *Client) (any, error) { return nil, c.Deregister(ctx, "m1") }, nil, "deregister m1"},
	}
	f := &fakeCloud{}
	srv := httptest.NewServer(Handler(f, token, nil))
	defer srv.Close()
	c, err := NewClient(ClientOptions{URL: srv.URL + "/", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		got, err := tt.call(c)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s = %+v, want %+v", tt.name, got, tt.want)
		}
		if seen := f.last(); seen != tt.seen {
			t.Errorf("%s: the cloud saw %q, want %q", tt.name, seen, tt.seen)
		}
	}

	// The same calls, failing in the cloud: each error says the call and the cloud's words.
	f.err = errors.New("kubeadm host m1: all 40 addresses are taken\nsecond line")
	for _, tt := range tests {
		_, err := tt.call(c)
		if err == nil || strings.Contains(err.Error(), "\n") ||
			!strings.Contains(err.Error(), "500 Internal Server Error: kubeadm host m1: all 40 addresses are taken; second line") {
			t.Errorf("%s failing: error %q, want the cloud's error on one line", tt.name, err)
		}
	}
}

// Calls without the token, to no call the API has, or with a body it cannot read fail with
// their status and one line.
func TestServerRefuses(t *testing.T) {
	t.Parallel()
	f := &fakeCloud{}
	var log strings.Builder
	var mu sync.Mutex
	srv := httptest.NewServer(Handler(f, token, writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return log.Write(p)
	})))
	defer srv.Close()
	for _, tt := range []struct {
		name, method, path, token, body string
		status                          int
		msg                             string
	}{
		{"no token", "GET", "/v1/hosts/m1", "", "", http.StatusUnauthorized, "no valid bearer token"},
		{"wrong token", "GET", "/v1/hosts/m1", "other", "", http.StatusUnauthorized, "no valid bearer token"},
		{"unknown call", "GET", "/v1/clusters", token, "", http.StatusNotFound, "no such call"},
		{"bad JSON", "POST", "/v1/hosts/m1", token, "{", http.StatusBadRequest, "request body: unexpected EOF"},
		{"unknown field", "PUT", "/v1/balancers/ns/w1", token, `{"loadBalancer":{"healthCheck":"tcp"},"x":1}`, http.StatusBadRequest,
			`request body: json: unknown field "x"`},
	} {
		req, err := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		if tt.token != "" {
			req.Header.Set("Authorization", "Bearer "+tt.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if resp.StatusCode != tt.status || string(body) != fmt.Sprintf("{\"error\":%q}\n", tt.msg) {
			t.Errorf("%s: %d %s, want %d and %q", tt.name, resp.StatusCode, body, tt.status, tt.msg)
		}
	}
	if n := len(f.calls); n != 0 {
		t.Errorf("the cloud was called %d times: %v", n, f.calls)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(log.String(), "\n"); n != 5 || !strings.Contains(log.String(), "lab cloud: GET /v1/hosts/m1: 401 no valid bearer token") {
		t.Errorf("server log (%d lines):\n%s", n, log.String())
	}
}

// Start serves HTTPS with a certificate, which a client trusting its CA reaches and one
// without it does not; Close stops it.
func TestStartTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// httptest's certificate is valid for 127.0.0.1; the test serves it from Start.
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	cert := ts.TLS.Certificates[0]
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	ts.Close()
	if _, err := Start(ServerOptions{Cloud: &fakeCloud{}, Address: "127.0.0.1:0"}); err == nil {
		t.Error("Start without a token succeeded")
	}
	s, err := Start(ServerOptions{Cloud: &fakeCloud{}, Token: token, Address: "127.0.0.1:0", Certificate: &cert})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL(), "https://127.0.0.1:") {
		t.Errorf("URL %s, want https://127.0.0.1:PORT", s.URL())
	}
	trusted, err := NewClient(ClientOptions{URL: s.URL(), Token: token, CA: ca})
	if err != nil {
		t.Fatal(err)
	}
	if h, err := trusted.Host(ctx, "m1"); err != nil || h != fakeHost {
		t.Errorf("Host over HTTPS = %+v, %v", h, err)
	}
	untrusted, err := NewClient(ClientOptions{URL: s.URL(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := untrusted.Host(ctx, "m1"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("Host without the CA: %v, want a certificate error", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := trusted.Host(ctx, "m1"); err == nil {
		t.Error("Host after Close succeeded")
	}
	if _, err := NewClient(ClientOptions{URL: s.URL(), Token: token, CA: []byte("no PEM")}); err == nil {
		t.Error("NewClient with a CA that holds no certificate succeeded")
	}
}

type writerFunc func([]byte) (int, error)

func (w writerFunc) Write(p []byte) (int, error) { return w(p) }
