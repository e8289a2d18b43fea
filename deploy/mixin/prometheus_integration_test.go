// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package mixin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// PrometheusTestsEnv, set to 1, runs TestIntegrationPrometheusKeyDrift (about 13 minutes: the
// mixin's own windows, unshortened).
const PrometheusTestsEnv = "CREDWATCH_MIXIN_PROMETHEUS"

// TestIntegrationPrometheusKeyDrift is the mixin's proof on a real Prometheus: a Prometheus
// server built from the module proxy (hack/promtool's go.mod pins it, as it pins promtool)
// scrapes the lab's members' /metrics with the lab's admin certificate and evaluates the mixin's
// rule files as shipped, while the key-drift fault runs: two members sharing the
// service-account key, then a third with its own. Clients present a token minted through every
// member to every member each second. The test reads Prometheus' own /api/v1/alerts: no mixin
// alert may be pending or firing while the members agree, nor during a healthy roll (a member
// with the shared key joins, an original one leaves), and
// CredwatchAPIServerRejectsWhatOthersAccept must then fire for the drifted member, and only for it.
func TestIntegrationPrometheusKeyDrift(t *testing.T) {
	if os.Getenv(PrometheusTestsEnv) != "1" {
		t.Skipf("real Prometheus over a lab, about 13 minutes: %s=1 runs it", PrometheusTestsEnv)
	}
	l := labtest.Start(t, lab.Options{Members: 2})
	prom := startPrometheus(t, l)
	ctx, cancel := context.WithCancel(context.Background())
	cl := startClients(ctx, t, l)
	defer func() { cancel(); cl.wait() }()

	// Healthy: every member shares the key; nothing may even be pending.
	quiet := func(phase string, d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Second) {
			if a := prom.alerts(t); len(a) > 0 {
				t.Errorf("%s: %v", phase, a)
			}
		}
	}
	quiet("with every member sharing the key", 2*time.Minute)
	if up := prom.query(t, `count(up{job="apiserver"} == 1)`); up != "2" {
		t.Fatalf("Prometheus scrapes %s members, want 2", up)
	}

	// Healthy roll: a member with the shared key joins, then an original leaves.
	joined, err := l.AddMember(ctx, lab.MemberOptions{})
	if err != nil {
		t.Fatalf("add a member with the shared key: %v", err)
	}
	prom.setTargets(t, l)
	cl.add(joined.Name, mintToken(t, l, joined.Name))
	quiet("healthy roll, a member with the shared key joined", 90*time.Second)
	if err := l.RemoveMember(ctx, l.Members()[0].Name, lab.RemoveOptions{}); err != nil {
		t.Fatalf("remove an original member: %v", err)
	}
	prom.setTargets(t, l)
	quiet("healthy roll, an original member left", 150*time.Second)

	// Key drift: a member with its own key joins.
	driftStart := time.Now()
	m, err := l.AddMember(ctx, lab.MemberOptions{SAKey: lab.SAKeyNew})
	if err != nil {
		t.Fatalf("add the drifted member: %v", err)
	}
	prom.setTargets(t, l)
	cl.add(m.Name, mintToken(t, l, m.Name))
	drifted := instance(t, l, m.Name)

	const alert = "CredwatchAPIServerRejectsWhatOthersAccept"
	fired := map[string]time.Duration{}
	for deadline := time.Now().Add(12 * time.Minute); time.Now().Before(deadline) && fired[drifted] == 0; time.Sleep(10 * time.Second) {
		for _, a := range prom.alerts(t) {
			if a.State == "firing" && a.Labels["alertname"] == alert {
				if _, ok := fired[a.Labels["instance"]]; !ok {
					fired[a.Labels["instance"]] = time.Since(driftStart).Round(time.Second)
				}
			}
		}
	}
	t.Logf("key-drift: %s fired for %v (after the drifted member was added)", alert, fired)
	if _, ok := fired[drifted]; !ok {
		t.Fatalf("%s never fired for the drifted member %s; alerts: %v", alert, drifted, prom.alerts(t))
	}
	for inst := range fired {
		if inst != drifted {
			t.Errorf("%s fired for %s, an original member", alert, inst)
		}
	}
}

type prometheus struct {
	url, config string
	tls         string // the scrape's tls_config, indented
}

// startPrometheus builds Prometheus from hack/promtool's module and starts it on loopback with
// the mixin's rule files, scraping the lab's members.
func startPrometheus(t *testing.T, l *lab.Lab) *prometheus {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "prometheus")
	build := exec.Command("go", "build", "-tags=remove_all_sd", "-o", bin, "github.com/prometheus/prometheus/cmd/prometheus")
	build.Dir = "../../hack/promtool"
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build prometheus: %v\n%s", err, out)
	}
	cfg := l.RESTConfig()
	for name, data := range map[string][]byte{"ca.crt": cfg.CAData, "admin.crt": cfg.CertData, "admin.key": cfg.KeyData} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"rules.yaml", "alerts.yaml"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := &prometheus{url: "http://" + addr, config: filepath.Join(dir, "prometheus.yml"),
		tls: fmt.Sprintf("ca_file: %s\n      cert_file: %s\n      key_file: %s",
			filepath.Join(dir, "ca.crt"), filepath.Join(dir, "admin.crt"), filepath.Join(dir, "admin.key"))}
	p.writeConfig(t, l)
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
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
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
	// Two scrapes of every member before the test starts counting.
	time.Sleep(15 * time.Second)
	return p
}

func (p *prometheus) writeConfig(t *testing.T, l *lab.Lab) {
	t.Helper()
	var targets []string
	for _, m := range l.Members() {
		targets = append(targets, fmt.Sprintf("%q", instance(t, l, m.Name)))
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 5s
  evaluation_interval: 5s
rule_files: [rules.yaml, alerts.yaml]
scrape_configs:
- job_name: apiserver
  scheme: https
  tls_config:
      %s
  static_configs:
  - targets: [%s]
`, p.tls, strings.Join(targets, ", "))
	if err := os.WriteFile(p.config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// setTargets rewrites the scrape targets to the lab's members and reloads Prometheus.
func (p *prometheus) setTargets(t *testing.T, l *lab.Lab) {
	t.Helper()
	p.writeConfig(t, l)
	resp, err := http.Post(p.url+"/-/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reload: %s", resp.Status)
	}
}

type promAlert struct {
	Labels map[string]string `json:"labels"`
	State  string            `json:"state"`
}

func (a promAlert) String() string {
	return fmt.Sprintf("%s{instance=%s} %s", a.Labels["alertname"], a.Labels["instance"], a.State)
}

// alerts are the mixin's alerts Prometheus holds pending or firing.
func (p *prometheus) alerts(t *testing.T) []promAlert {
	t.Helper()
	var body struct {
		Data struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	p.get(t, "/api/v1/alerts", &body)
	return body.Data.Alerts
}

// query is the value of an instant query's single sample ("" when none).
func (p *prometheus) query(t *testing.T, q string) string {
	t.Helper()
	var body struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	p.get(t, "/api/v1/query?query="+url.QueryEscape(q), &body)
	if len(body.Data.Result) != 1 {
		return ""
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	return s
}

func (p *prometheus) get(t *testing.T, path string, v any) {
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
