// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package mixin_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// fault is one lab scenario as the Prometheus test runs it: a lab of its own, clients that
// present tokens minted through every member to every member each second, two quiet minutes,
// then apply, which breaks the lab as the scenario does and says which alerts must fire for
// which members.
type fault struct {
	name, summary string
	opts          lab.Options
	// apply breaks the lab; it returns the alerts that must fire, each for the members named.
	apply func(ctx context.Context, t *testing.T, r *faultRun) map[string][]string
	// watch is how long to watch after apply at least (default: until every expected alert
	// fired); budget at most (default 22 minutes: the mixin's longest for is 15 minutes).
	watch, budget time.Duration
	// quiet: no alert may even be pending at any time (healthy-roll).
	quiet bool
	// watcher runs credwatch's watcher against the lab, scraped too (the chart's alerts);
	// with audit, the lab's members keep audit logs and the watcher follows them.
	watcher, audit bool
	// measure, when set, reads what the scenario shows beyond alerts once the watch ends
	// (queries of Prometheus), for the table's notes.
	measure func(t *testing.T, r *faultRun) map[string]string
}

// faultRun is a fault's lab while it runs.
type faultRun struct {
	lab   *lab.Lab
	prom  *prometheus
	cl    *clients
	name  string
	mu    sync.Mutex
	names map[string]string // instance → member, every member the lab ever had
}

// retarget makes Prometheus scrape the lab's current members and remembers their names.
func (r *faultRun) retarget(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	for _, m := range r.lab.Members() {
		r.names[instance(t, r.lab, m.Name)] = m.Name
		r.names[m.URL] = m.Name
	}
	r.mu.Unlock()
	r.prom.setTargets(t, r.name, r.lab)
}

// alertMember is the member an alert is about: the watcher's alerts name it in verifier or member,
// the mixin's by the instance scraped.
func (r *faultRun) alertMember(a promAlert) string {
	for _, k := range []string{"verifier", "member"} {
		if v := a.Labels[k]; v != "" {
			return r.member(v)
		}
	}
	if a.Labels["job"] == "credwatch" {
		return "the watcher"
	}
	return r.member(a.Labels["instance"])
}

func (r *faultRun) member(inst string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n, ok := r.names[inst]; ok {
		return n
	}
	return inst
}

// memberNames are the lab's current members' names, in order.
func (r *faultRun) memberNames() []string {
	var out []string
	for _, m := range r.lab.Members() {
		out = append(out, m.Name)
	}
	return out
}

// TestIntegrationPrometheusScenarios is the mixin's proof on a real Prometheus: a Prometheus
// server built from the module proxy (hack/promtool's go.mod pins it, as it pins promtool)
// scrapes the members of one lab per scenario with each lab's admin certificate and evaluates the
// mixin's rule files as shipped, while every lab runs its scenario at once. It reads Prometheus'
// own /api/v1/alerts: nothing may fire (or even be pending) in a lab before its fault nor at
// all in healthy-roll; each scenario's alerts must fire for the members named. With -args
// -record it writes what fired, for which member and after how long, to
// testdata/prometheus-scenarios.json and the table of docs/metrics.md.
func TestIntegrationPrometheusScenarios(t *testing.T) {
	if os.Getenv(PrometheusTestsEnv) != "1" {
		t.Skipf("a real Prometheus over one lab per scenario, about 18 minutes: %s=1 runs it", PrometheusTestsEnv)
	}
	start := time.Now()
	prom := startPrometheus(t)
	var mu sync.Mutex
	var results []scenarioResult
	starts := make(chan struct{}, 2) // labs starting at once: each start takes both cores for a while
	t.Run("scenarios", func(t *testing.T) {
		for _, f := range faults() {
			t.Run(f.name, func(t *testing.T) {
				t.Parallel()
				res := runFault(t, prom, f, starts)
				mu.Lock()
				results = append(results, res)
				mu.Unlock()
			})
		}
	})
	if *record {
		writeScenarioResults(t, results)
		if slices.ContainsFunc(results, func(r scenarioResult) bool { return r.Scenario == "key-drift" }) {
			screenshot(t, prom, start, "key-drift")
		}
	}
}

// screenshotFile is the dashboard's picture in docs/metrics.md.
const screenshotFile = "docs/img/credentials-dashboard.png"

// screenshot draws the mixin's dashboard (hack/dashshot, headless Chromium) from what Prometheus
// scraped of one scenario's lab since start.
func screenshot(t *testing.T, prom *prometheus, start time.Time, scenario string) {
	t.Helper()
	cmd := exec.Command("go", "run", "./hack/dashshot", "--prometheus", prom.url,
		"--start", start.UTC().Format(time.RFC3339), "--end", time.Now().UTC().Format(time.RFC3339),
		"--step", "15s", "--scrape-interval", "5s", "--var", "cluster="+scenario,
		"--title", "credwatch: credentials (lab scenario "+scenario+", "+lab.DefaultVersion+")", "--out", screenshotFile)
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("dashboard screenshot: %v\n%s", err, out)
		return
	}
	t.Logf("%s", out)
}

// runFault runs f on a lab of its own, started while starts has room.
func runFault(t *testing.T, prom *prometheus, f fault, starts chan struct{}) scenarioResult {
	f.opts.Audit = f.opts.Audit || f.audit
	l := startLab(t, f.opts, starts)
	r := &faultRun{lab: l, prom: prom, name: f.name, names: map[string]string{}}
	r.retarget(t)
	ctx, cancel := context.WithCancel(context.Background())
	r.cl = startClients(ctx, t, l)
	t.Cleanup(func() { cancel(); r.cl.wait() })
	if f.watcher {
		startWatcher(ctx, t, r, f.audit)
	}

	// Two quiet minutes: every member scraped, nothing pending.
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(10 * time.Second) {
		if a := prom.alerts(t, f.name); len(a) > 0 {
			t.Errorf("%s, before the fault: %v", f.name, a)
		}
	}
	applied := time.Now()
	expect := f.apply(ctx, t, r)
	res := scenarioResult{Scenario: f.name, Summary: f.summary, Expected: expect, Watcher: f.watcher}
	budget := f.budget
	if budget == 0 {
		budget = 22 * time.Minute
	}
	fired := map[[2]string]time.Duration{} // (alert, member) → after
	done := func() bool {
		if time.Since(applied) < f.watch {
			return false
		}
		for alert, members := range expect {
			for _, m := range members {
				if _, ok := fired[[2]string{alert, m}]; !ok {
					return false
				}
			}
		}
		return true
	}
	for deadline := applied.Add(budget); time.Now().Before(deadline) && !done(); time.Sleep(10 * time.Second) {
		for _, a := range prom.alerts(t, f.name) {
			if f.quiet {
				t.Errorf("%s: %v", f.name, a)
			}
			if a.State != "firing" {
				continue
			}
			k := [2]string{a.Labels["alertname"], r.alertMember(a)}
			if _, ok := fired[k]; !ok {
				fired[k] = time.Since(applied).Round(time.Second)
				t.Logf("%s: %s fired for %s %s after the fault", f.name, k[0], k[1], fired[k])
			}
		}
	}
	res.Watched = time.Since(applied).Round(time.Second).String()
	if f.measure != nil {
		res.Measured = f.measure(t, r)
	}
	for k, after := range fired {
		res.Fired = append(res.Fired, firedAlert{Alert: k[0], Member: k[1], After: after.String()})
	}
	slices.SortFunc(res.Fired, func(a, b firedAlert) int {
		if a.Alert != b.Alert {
			return strings.Compare(a.Alert, b.Alert)
		}
		return strings.Compare(a.Member, b.Member)
	})
	for alert, members := range expect {
		for _, m := range members {
			if _, ok := fired[[2]string{alert, m}]; !ok {
				t.Errorf("%s: %s never fired for %s within %s; firing: %v", f.name, alert, m, budget, res.Fired)
			}
		}
	}
	return res
}

// startLab starts a lab while starts has room, and makes room again however the start ends (a
// lab that fails to start ends its test with t.Fatal: the other scenarios must not wait forever).
func startLab(t *testing.T, o lab.Options, starts chan struct{}) *lab.Lab {
	t.Helper()
	starts <- struct{}{}
	defer func() { <-starts }()
	return labtest.Start(t, o)
}
