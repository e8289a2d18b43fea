// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package mixin_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/toolcache"
	"github.com/credwatch/credwatch/pkg/lab"
)

// PrometheusTestsEnv, set to 1, runs TestIntegrationPrometheusScenarios (about 18 minutes: the
// mixin's own windows, unshortened).
const PrometheusTestsEnv = "CREDWATCH_MIXIN_PROMETHEUS"

// PrometheusKeepEnv names a directory (that must not exist) to copy Prometheus' TSDB into when the
// test ends: the dashboard's screenshot is rendered from it (docs/metrics.md).
const PrometheusKeepEnv = "CREDWATCH_MIXIN_PROMETHEUS_KEEP"

// prometheus is one real Prometheus server scraping the members of several labs: each lab is a
// scrape job of its own (its own CA and admin certificate) whose targets carry job="apiserver"
// (the mixin's default selector) and cluster=<the lab's scenario>, so the rules, which group by
// cluster, compare a member only with the members of its own lab.
type prometheus struct {
	url, dir, config string

	mu   sync.Mutex
	jobs map[string]scrapeJob // scenario → its job
}

type scrapeJob struct {
	tls     string   // the job's tls_config, indented
	targets []string // host:port of the lab's members
	watcher string   // host:port of the lab's credwatch watcher, if one runs
}

// startPrometheus starts Prometheus (hack/promtool's module pins it; hack/tools.sh builds it
// once per machine) on loopback with the mixin's rule files and no target yet.
func startPrometheus(t *testing.T) *prometheus {
	t.Helper()
	dir := t.TempDir()
	bin, err := toolcache.Path("../..", "prometheus")
	if err != nil {
		t.Fatal(err)
	}
	// The mixin's files, and the chart's rules on the watcher's own series.
	for f, to := range map[string]string{"rules.yaml": "rules.yaml", "alerts.yaml": "alerts.yaml", watcherAlerts: "watcher-alerts.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := &prometheus{url: "http://" + addr, dir: dir, config: filepath.Join(dir, "prometheus.yml"), jobs: map[string]scrapeJob{}}
	p.mu.Lock()
	err = p.writeConfigLocked()
	p.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+p.config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--web.enable-lifecycle")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// SIGTERM: Prometheus closes its TSDB, so that a kept copy opens again.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		stopped := make(chan struct{})
		go func() { _ = cmd.Wait(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-stopped
		}
		if keep := os.Getenv(PrometheusKeepEnv); keep != "" {
			if err := os.CopyFS(keep, os.DirFS(filepath.Join(dir, "data"))); err != nil {
				t.Errorf("keep Prometheus' data in %s: %v", keep, err)
			} else {
				t.Logf("Prometheus' data kept in %s (prometheus --storage.tsdb.path=%s serves it again)", keep, keep)
			}
		}
		if t.Failed() {
			data, _ := os.ReadFile(log.Name())
			t.Logf("prometheus log:\n%s", tail(string(data), 40))
		}
	})
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if resp, err := http.Get(p.url + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("prometheus not ready after 60 s")
		}
	}
	return p
}

// setTargets makes the lab's current members the targets of the scenario's job (adding the job,
// with the lab's CA and admin certificate, the first time) and reloads Prometheus.
func (p *prometheus) setTargets(t testing.TB, scenario string, l *lab.Lab) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	job, ok := p.jobs[scenario]
	if !ok {
		dir := filepath.Join(p.dir, scenario)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		cfg := l.RESTConfig()
		for name, data := range map[string][]byte{"ca.crt": cfg.CAData, "admin.crt": cfg.CertData, "admin.key": cfg.KeyData} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		job.tls = fmt.Sprintf("ca_file: %s\n    cert_file: %s\n    key_file: %s",
			filepath.Join(dir, "ca.crt"), filepath.Join(dir, "admin.crt"), filepath.Join(dir, "admin.key"))
	}
	job.targets = nil
	for _, m := range l.Members() {
		job.targets = append(job.targets, fmt.Sprintf("%q", instance(t, l, m.Name)))
	}
	p.jobs[scenario] = job
	p.reloadLocked(t)
}

// setWatcher makes Prometheus scrape the scenario's watcher at addr (host:port) as job
// "credwatch" (after setTargets).
func (p *prometheus) setWatcher(t testing.TB, scenario, addr string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	job := p.jobs[scenario]
	job.watcher = addr
	p.jobs[scenario] = job
	p.reloadLocked(t)
}

func (p *prometheus) reloadLocked(t testing.TB) {
	t.Helper()
	if err := p.writeConfigLocked(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(p.url+"/-/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reload: %s", resp.Status)
	}
}

func (p *prometheus) writeConfigLocked() error {
	var b strings.Builder
	b.WriteString("global:\n  scrape_interval: 5s\n  evaluation_interval: 5s\nrule_files: [rules.yaml, alerts.yaml, watcher-alerts.yaml]\n")
	names := slices.Sorted(maps.Keys(p.jobs))
	if len(names) == 0 {
		b.WriteString("scrape_configs: []\n")
	} else {
		b.WriteString("scrape_configs:\n")
	}
	for _, n := range names {
		j := p.jobs[n]
		fmt.Fprintf(&b, `- job_name: %q
  scheme: https
  tls_config:
    %s
  static_configs:
  - targets: [%s]
    labels: {cluster: %q}
  relabel_configs:
  - target_label: job
    replacement: apiserver
`, n, j.tls, strings.Join(j.targets, ", "), n)
		if j.watcher != "" {
			fmt.Fprintf(&b, `- job_name: %q
  static_configs:
  - targets: [%q]
    labels: {cluster: %q}
  relabel_configs:
  - target_label: job
    replacement: credwatch
`, n+"-watcher", j.watcher, n)
		}
	}
	return os.WriteFile(p.config, []byte(b.String()), 0o600)
}

type promAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

func (a promAlert) String() string {
	return fmt.Sprintf("%s{instance=%s} %s", a.Labels["alertname"], a.Labels["instance"], a.State)
}

// alerts are the alerts Prometheus holds pending or firing for the scenario's lab.
func (p *prometheus) alerts(t testing.TB, scenario string) []promAlert {
	t.Helper()
	var body struct {
		Data struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	p.get(t, "/api/v1/alerts", &body)
	var out []promAlert
	for _, a := range body.Data.Alerts {
		if a.Labels["cluster"] == scenario {
			out = append(out, a)
		}
	}
	return out
}

// vector is an instant query's samples as "{labels} value" (sorted, "none" when empty).
func (p *prometheus) vector(t testing.TB, q string) string {
	t.Helper()
	var body struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	p.get(t, "/api/v1/query?query="+url.QueryEscape(q), &body)
	var out []string
	for _, r := range body.Data.Result {
		var ls []string
		for _, k := range slices.Sorted(maps.Keys(r.Metric)) {
			ls = append(ls, fmt.Sprintf("%s=%q", k, r.Metric[k]))
		}
		v, _ := r.Value[1].(string)
		out = append(out, fmt.Sprintf("{%s} %s", strings.Join(ls, ", "), v))
	}
	if len(out) == 0 {
		return "none"
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

func (p *prometheus) get(t testing.TB, path string, v any) {
	t.Helper()
	resp, err := http.Get(p.url + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
