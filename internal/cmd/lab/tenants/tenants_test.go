// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package tenants

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmdtest"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/lab/supervisor"
	"github.com/credwatch/credwatch/pkg/lab/tally"
	"github.com/credwatch/credwatch/pkg/lab/tenant"

	"github.com/credwatch/credwatch/pkg/report"
)

func TestConfigOptions(t *testing.T) {
	tests := []struct {
		name    string
		c       Config
		wantErr string
		check   func(tenant.Options) bool
	}{
		{"defaults", Config{Namespace: "a", Pods: 2}, "", func(o tenant.Options) bool { return o.Interval == 0 && o.RefreshEvery == 0 }},
		{"durations", Config{Namespace: "a", Interval: "250ms", RefreshEvery: "5s"}, "", func(o tenant.Options) bool {
			return o.Interval == 250*time.Millisecond && o.RefreshEvery == 5*time.Second
		}},
		{"bad interval", Config{Interval: "fast"}, `interval "fast"`, nil},
		{"negative refresh", Config{RefreshEvery: "-1s"}, `refreshEvery "-1s"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := tt.c.options()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(o) {
				t.Fatalf("options = %+v, %v", o, err)
			}
		})
	}
}

func TestStartValidate(t *testing.T) {
	tests := []struct {
		name string
		o    startOptions
		ok   bool
	}{
		{"ok", startOptions{cfg: Config{Pods: 2}, interval: 100 * time.Millisecond}, true},
		{"no pods", startOptions{cfg: Config{Pods: 0}, interval: time.Second}, false},
		{"too fast", startOptions{cfg: Config{Pods: 1}, interval: time.Millisecond}, false},
		{"negative refresh", startOptions{cfg: Config{Pods: 1}, interval: time.Second, refreshEvery: -time.Second}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.validate()
			if (err == nil) != tt.ok {
				t.Fatalf("validate = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && cli.Code(err) != cli.ExitUsage {
				t.Errorf("exit code %d, want %d", cli.Code(err), cli.ExitUsage)
			}
		})
	}
}

// TestStartWaitsForTenants: `lab tenants start` returns once the tenants answer with tallies (the
// supervisor starts them after answering the request), so that `lab tenants` right after it shows
// them instead of exit 4, "still starting"; tenants that could not start are its error.
func TestStartWaitsForTenants(t *testing.T) {
	tests := []struct {
		name    string
		ready   int32  // the tallies request answered first (those before: 503, still starting); 0: none
		service string // the service's state in the supervisor's status
		code    int
		want    string
	}{
		{"running", 3, "running", cli.ExitOK, "tenants started in namespace tenants: 2 pods"},
		{"could not start", 0, "exited: create namespace tenants: forbidden", cli.ExitInternal, "exited: create namespace tenants: forbidden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			asked := fakeSupervisor(t, dir, tt.ready, tt.service)
			r := cmdtest.Run(t, func(s cli.Streams) *cobra.Command { return NewCommand(s, dir) }, nil, "start")
			if r.Code != tt.code || !strings.Contains(r.Stdout+r.Stderr, tt.want) {
				t.Fatalf("exit %d, want %d with %q\nstdout: %s\nstderr: %s", r.Code, tt.code, tt.want, r.Stdout, r.Stderr)
			}
			if tt.ready > 0 && asked.Load() != tt.ready {
				t.Errorf("asked for tallies %d times, want %d: returned before the tenants ran", asked.Load(), tt.ready)
			}
		})
	}
}

// fakeSupervisor answers on dir's supervisor socket as a lab whose tenants service starts, and
// answers its tallies from request number ready on (never if 0); it counts those requests.
func fakeSupervisor(t *testing.T, dir string, ready int32, service string) *atomic.Int32 {
	t.Helper()
	var asked atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/services/"+ServiceName, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"started":"tenants"}`))
	})
	mux.HandleFunc("GET /v1/services/"+ServiceName+"/tallies", func(w http.ResponseWriter, _ *http.Request) {
		if n := asked.Add(1); ready == 0 || n < ready {
			http.Error(w, `{"error":"tenants are still starting"}`, http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"kind":"LabTenants"}`))
	})
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(supervisor.State{Phase: supervisor.PhaseReady, Services: map[string]string{ServiceName: service}})
	})
	ln, err := net.Listen("unix", supervisor.SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return &asked
}

func TestTalliesTable(t *testing.T) {
	tl := Tallies{Namespace: "tenants", Tenants: tally.Snapshot{Pods: 2, Since: time.Now(), Requests: 10, Unauthorized: 4,
		Members: []tally.Member{{Member: "apiserver-4", Requests: 5, Unauthorized: 4, TokensMinted: 1}},
		Pairs:   []tally.Pair{{MintedBy: "apiserver-1", ServedBy: "apiserver-4", Requests: 4, Unauthorized: 4}}}}
	var b bytes.Buffer
	if err := tl.WriteTable(&b, report.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"10 requests, 4 401 (40.0%)", "apiserver-4  5       4    80%", "tokens minted by apiserver-1 rejected by apiserver-4: 4 of 4"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestIntegrationTenantsService runs the service the supervisor hosts against a real 1-member lab
// and reads its tallies through its handler.
func TestIntegrationTenantsService(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 1})
	svc, h, err := Factory(l, json.RawMessage(`{"namespace":"svc","pods":1,"interval":"50ms"}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("service: %v", err)
		}
	}()
	var tl Tallies
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/tallies", nil))
		if rec.Code != http.StatusOK {
			continue
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &tl); err != nil {
			t.Fatal(err)
		}
		if tl.Tenants.Requests >= 5 {
			break
		}
	}
	if tl.Tenants.Requests < 5 || tl.Tenants.Unauthorized != 0 || tl.Tenants.Member("apiserver-1").Statuses[201] == 0 {
		t.Fatalf("tallies = %+v", tl.Tenants)
	}
	if tl.Kind != "LabTenants" || tl.Namespace != "svc" {
		t.Errorf("document = %s/%s", tl.Kind, tl.Namespace)
	}
}
