// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	labcapi "github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/workload"
	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
	"github.com/credwatch/credwatch/pkg/lab/supervisor"
	"github.com/credwatch/credwatch/pkg/report"
)

// ServiceName is the name the Cluster API lab is hosted under in the lab's supervisor.
const ServiceName = "capi"

// Config is what `lab capi up` posts to the supervisor.
type Config struct {
	CAPI           string `json:"capi"`
	Cluster        string `json:"cluster"`
	Replicas       int    `json:"replicas"`
	HealthCheck    string `json:"healthCheck"`
	Deregistration string `json:"deregistration"`
}

// Validate checks c's values (the flags' names are the fields' JSON names, but for Cluster:
// --capi-cluster).
func (c Config) Validate() error {
	if !slices.Contains(labcapi.Versions(), c.CAPI) {
		return fmt.Errorf("--capi %q: want one of %v", c.CAPI, labcapi.Versions())
	}
	_, err := c.workload()
	return err
}

// workload is the workload cluster's configuration.
func (c Config) workload() (workload.Config, error) {
	w := workload.Config{Name: c.Cluster, Replicas: c.Replicas, LoadBalancer: infra.LoadBalancer{
		HealthCheck: lb.HealthCheck(c.HealthCheck), Deregistration: infra.Deregistration(c.Deregistration),
	}}
	if _, err := workload.Objects(w); err != nil {
		return w, err
	}
	return w, nil
}

// Status is what GET /v1/services/capi/status returns and `lab capi status` prints.
type Status struct {
	APIVersion   string                `json:"apiVersion"`
	Kind         string                `json:"kind"`
	Phase        string                `json:"phase"` // starting, ready or failed
	Error        string                `json:"error,omitempty"`
	CAPI         string                `json:"capi"`
	Cluster      string                `json:"cluster"`
	Kubeconfig   string                `json:"workloadKubeconfig,omitempty"` // file in the lab directory
	ControlPlane *capilab.ControlPlane `json:"controlPlane,omitempty"`
	Timeline     []string              `json:"timeline,omitempty"` // the provider's steps
}

// Factory builds the Cluster API lab service for the supervisor (supervisor.ServiceFactory).
func Factory(l *lab.Lab, raw json.RawMessage) (supervisor.Service, http.Handler, error) {
	var c Config
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, nil, fmt.Errorf("capi config: %w", err)
	}
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	s := &service{l: l, cfg: c, st: Status{APIVersion: report.APIVersion, Kind: "LabCAPI", Phase: supervisor.PhaseStarting, CAPI: c.CAPI, Cluster: c.Cluster}}
	return s, s.handler(), nil
}

type service struct {
	l   *lab.Lab
	cfg Config

	mu  sync.Mutex
	st  Status
	cl  *capilab.Lab
	log logLines
}

// Start brings the Cluster API lab up, waits for its control plane and runs until ctx is
// cancelled (lab down), then stops it.
func (s *service) Start(ctx context.Context) error {
	w, _ := s.cfg.workload()
	cl, err := capilab.Start(ctx, s.l, capilab.Config{CAPI: s.cfg.CAPI, Cluster: w, Log: &s.log})
	if err != nil {
		s.fail(err)
		return err
	}
	s.mu.Lock()
	s.cl = cl
	s.mu.Unlock()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
		defer cancel()
		_ = cl.Stop(sctx)
	}()
	wctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	if _, err := cl.WaitControlPlane(wctx, max(1, s.cfg.Replicas)); err != nil {
		s.fail(err)
		<-ctx.Done()
		return nil
	}
	kc, err := cl.WorkloadKubeconfig(ctx)
	if err == nil {
		file := filepath.Join(s.l.Dir(), s.cfg.Cluster+".kubeconfig")
		if err = os.WriteFile(file, kc, 0o600); err == nil {
			s.mu.Lock()
			s.st.Kubeconfig = file
			s.mu.Unlock()
		}
	}
	if err != nil {
		s.fail(err)
	} else {
		s.mu.Lock()
		s.st.Phase = supervisor.PhaseReady
		s.mu.Unlock()
	}
	<-ctx.Done()
	return nil
}

func (s *service) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.Phase, s.st.Error = supervisor.PhaseFailed, err.Error()
}

// status is the current Status, read fresh from the management cluster.
func (s *service) status(ctx context.Context) Status {
	s.mu.Lock()
	st, cl := s.st, s.cl
	s.mu.Unlock()
	if cl != nil {
		if cp, err := cl.ControlPlane(ctx); err == nil {
			st.ControlPlane = &cp
		}
		for _, e := range cl.Events() {
			st.Timeline = append(st.Timeline, e.String())
		}
	}
	return st
}

func (s *service) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.status(r.Context()))
	})
	mux.HandleFunc("GET /log", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.log.lines())
	})
	return mux
}

// logLines keeps the Cluster API lab's progress lines for `lab capi up` to show.
type logLines struct {
	mu sync.Mutex
	ls []string
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ls = append(l.ls, splitLines(string(p))...)
	return len(p), nil
}

func (l *logLines) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.ls...)
}

func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
