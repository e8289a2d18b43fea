// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package tenants

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/supervisor"
	"github.com/credwatch/credwatch/pkg/lab/tally"
	"github.com/credwatch/credwatch/pkg/lab/tenant"
	"github.com/credwatch/credwatch/pkg/report"
)

// ServiceName is the name the tenants service is registered under in the supervisor.
const ServiceName = "tenants"

// Config is what `lab tenants start` posts to the supervisor.
type Config struct {
	Namespace    string `json:"namespace"`
	Pods         int    `json:"pods"`
	Interval     string `json:"interval,omitempty"`     // Go duration
	RefreshEvery string `json:"refreshEvery,omitempty"` // Go duration; "" = the kubelet's rule
}

func (c Config) options() (tenant.Options, error) {
	o := tenant.Options{Namespace: c.Namespace, Pods: c.Pods, MaxDuration: 24 * time.Hour}
	for _, d := range []struct {
		name string
		in   string
		out  *time.Duration
	}{{"interval", c.Interval, &o.Interval}, {"refreshEvery", c.RefreshEvery, &o.RefreshEvery}} {
		if d.in == "" {
			continue
		}
		v, err := time.ParseDuration(d.in)
		if err != nil || v < 0 {
			return o, fmt.Errorf("tenants %s %q: want a duration such as 200ms", d.name, d.in)
		}
		*d.out = v
	}
	return o, nil
}

// Tallies is what GET /v1/services/tenants/tallies returns (and `lab tenants` prints).
type Tallies struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Namespace  string         `json:"namespace"`
	Started    time.Time      `json:"started"`
	Tenants    tally.Snapshot `json:"tenants"`
}

// Factory builds the tenants service for the supervisor (supervisor.ServiceFactory).
func Factory(l *lab.Lab, raw json.RawMessage) (supervisor.Service, http.Handler, error) {
	var c Config
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, nil, fmt.Errorf("tenants config: %w", err)
		}
	}
	if c.Namespace == "" {
		c.Namespace = "tenants"
	}
	o, err := c.options()
	if err != nil {
		return nil, nil, err
	}
	o.CA = l.CA()
	t, err := tenant.New(l.RESTConfig(), o)
	if err != nil {
		return nil, nil, err
	}
	s := &service{t: t, ns: c.Namespace}
	return s, s.handler(), nil
}

type service struct {
	t       *tenant.Tenant
	ns      string
	mu      sync.Mutex
	started time.Time
}

// Start starts the tenants and runs until ctx is cancelled (lab down).
func (s *service) Start(ctx context.Context) error {
	if err := s.t.Start(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	s.started = time.Now()
	s.mu.Unlock()
	<-ctx.Done()
	s.t.Stop()
	return nil
}

func (s *service) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tallies", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		started := s.started
		s.mu.Unlock()
		if started.IsZero() {
			http.Error(w, `{"error":"tenants are still starting"}`, http.StatusServiceUnavailable)
			return
		}
		snap := s.t.Snapshot()
		if r.URL.Query().Get("reset") == "true" {
			snap = s.t.Reset()
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Tallies{APIVersion: report.APIVersion, Kind: "LabTenants", Namespace: s.ns, Started: started, Tenants: snap})
	})
	return mux
}
