// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package mixin_test

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/watch"
)

// watcherAlerts is the chart's rule file on the watcher's own series (credwatch watch --listen).
const watcherAlerts = "../helm/credwatch/files/alerts.yaml"

// startWatcher runs credwatch's watcher (pkg/watch, as `credwatch watch --listen` runs it) against
// the fault's lab until ctx ends, and has Prometheus scrape its /metrics: the chart's alerts are
// evaluated beside the mixin's.
func startWatcher(ctx context.Context, t *testing.T, r *faultRun, audit bool) {
	t.Helper()
	var audits []watch.LogFile
	if audit { // the members' audit logs, as `credwatch watch --audit-log HOST=PATH` follows them
		for _, m := range r.lab.Members() {
			audits = append(audits, watch.LogFile{Host: m.Name, Path: r.lab.AuditLog(m.Name)})
		}
	}
	metrics := watch.NewMetrics(watch.BuildInfo{})
	srv := httptest.NewServer(metrics.Handler())
	t.Cleanup(srv.Close)
	w, err := watch.New(watch.Config{
		Check:    check.Config{REST: r.lab.RESTConfig(), CreateProbeSA: true, Timeout: 5 * time.Second},
		Interval: 5 * time.Second,
		Endpoints: func() []string { // the lab's list: a member joins before the EndpointSlice lists it
			var out []string
			for _, m := range r.lab.Members() {
				out = append(out, m.URL)
			}
			return out
		},
		Observers: []watch.Observer{metrics},
		AuditLogs: audits,
	})
	if err != nil {
		t.Fatalf("watcher: %v", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	r.prom.setWatcher(t, r.name, u.Host)
}

// watcherAlertNames are the alerts of the chart's rule file.
func watcherAlertNames() ([]string, error) {
	data, err := os.ReadFile(watcherAlerts)
	if err != nil {
		return nil, err
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	var out []string
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out = append(out, r.Alert)
			}
		}
	}
	return out, nil
}
