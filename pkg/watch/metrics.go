// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/credwatch/credwatch/pkg/redact"
)

// Metrics exports the last interval's state to Prometheus and serves /healthz and /readyz.
// Names follow the Prometheus naming guide and kube-state-metrics' habits: counters end in
// _total, facts about a thing are an _info gauge of 1, times are _timestamp_seconds, and cause
// labels are catalogue IDs (credwatch explain ID).
type Metrics struct {
	reg      *prometheus.Registry
	duration prometheus.Histogram

	mu   sync.Mutex
	last *State
}

// BuildInfo is what credwatch_build_info says of the running binary.
type BuildInfo struct {
	Version   string
	Revision  string
	GoVersion string
}

var (
	descBuild      = prometheus.NewDesc("credwatch_build_info", "1, labelled with the watcher's version, VCS revision and Go version.", []string{"version", "revision", "goversion"}, nil)
	descLastCheck  = prometheus.NewDesc("credwatch_last_check_timestamp_seconds", "When the last interval's checks finished, in seconds since the Unix epoch.", nil, nil)
	descMemberInfo = prometheus.NewDesc("credwatch_member_info", "1 for each API server member of the last interval, labelled with its Kubernetes version, the key id it signs with and its issuer (empty: not read).", []string{"member", "version", "kid", "issuer"}, nil)
	descUp         = prometheus.NewDesc("credwatch_member_up", "1 when the member answered directly in the last interval.", []string{"member"}, nil)
	descReady      = prometheus.NewDesc("credwatch_member_ready", "1 when the member's /readyz passed in the last interval.", []string{"member"}, nil)
	descTrust      = prometheus.NewDesc("credwatch_trust", "1 when verifier accepted the probe token minted through signer in the last interval, 0 when it rejected it (absent: unknown).", []string{"signer", "verifier"}, nil)
	descHeld       = prometheus.NewDesc("credwatch_held_token_trust", "1 when verifier accepted the token held since signer first appeared, 0 when it rejected it.", []string{"signer", "verifier"}, nil)
	descAuth       = prometheus.NewDesc("credwatch_auth_failures_total", "Credential failures the member's own log lines reported since the watcher started (--log-file, --pod-logs), by the catalogue ID of the cause they name.", []string{"member", "cause"}, nil)
	descMemberAuth = prometheus.NewDesc("credwatch_member_auth_failures_total", "The member's own authentication_attempts counter other than success, by its result label (error, failure).", []string{"member", "result"}, nil)
	descFinding    = prometheus.NewDesc("credwatch_finding", "1 for each finding of the last interval.", []string{"id", "severity", "member"}, nil)
	descSATokens   = prometheus.NewDesc("credwatch_serviceaccount_tokens_total", "Requests the member's audit log (--audit-log) recorded since the watcher started as authenticated with a service account's stale or legacy token (kind stale|legacy); past --audit-serviceaccounts accounts per kind, namespace \"\" and serviceaccount \"other\".", []string{"member", "namespace", "serviceaccount", "kind"}, nil)
	descLogCause   = prometheus.NewDesc("credwatch_log_cause_lines", "Lines of the member's own log naming the cause id since it appeared (absent: not named lately).", []string{"member", "id"}, nil)
)

// NewMetrics returns the exporter of the binary b with its own registry (plus Go and process
// collectors).
func NewMetrics(b BuildInfo) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "credwatch_probe_duration_seconds",
			Help:    "How long one interval's probes (discovery, member endpoints, trust matrix, held tokens) took.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}})}
	build := prometheus.MustNewConstMetric(descBuild, prometheus.GaugeValue, 1, b.Version, b.Revision, b.GoVersion)
	m.reg.MustRegister(m, m.duration, constCollector{build},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// constCollector collects metrics that never change (credwatch_build_info): they are served
// before the first interval finishes too.
type constCollector []prometheus.Metric

func (c constCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c {
		ch <- m.Desc()
	}
}

func (c constCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}

// Observe keeps the state.
func (m *Metrics) Observe(s *State, _ []Event) {
	m.duration.Observe(s.Took.Seconds())
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last = s
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLastCheck, descMemberInfo, descUp, descReady, descTrust, descHeld, descAuth, descMemberAuth, descFinding, descLogCause, descSATokens} {
		ch <- d
	}
}

// Collect implements prometheus.Collector from the last state.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	s := m.last
	m.mu.Unlock()
	if s == nil {
		return
	}
	// Label values come from the cluster (member names, URLs, results): a scrape leaves the
	// process, so they are redacted as every other output is.
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, redactLabels(labels)...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, redactLabels(labels)...)
	}
	gauge(descLastCheck, float64(s.Time.Add(s.Took).UnixNano())/1e9)
	for _, mem := range s.Members {
		gauge(descMemberInfo, 1, mem.Name, mem.Version, mem.SigningKID, mem.Issuer)
		gauge(descUp, b2f(mem.Up), mem.Name)
		gauge(descReady, b2f(mem.Ready), mem.Name)
		for _, res := range sortedKeys(mem.AuthFailures) {
			counter(descMemberAuth, mem.AuthFailures[res], mem.Name, res)
		}
	}
	for _, c := range s.LogTotals {
		counter(descAuth, float64(c.Lines), c.Member, c.ID)
	}
	for _, c := range s.Trust {
		if !c.unknown() {
			gauge(descTrust, b2f(c.Accepted), c.Signer, c.Verifier)
		}
	}
	for _, c := range s.Held {
		if !c.unknown() && c.Signer != "" {
			gauge(descHeld, b2f(c.Accepted), c.Signer, c.Verifier)
		}
	}
	for _, c := range s.ServiceAccountTokens {
		counter(descSATokens, float64(c.Requests), c.Member, c.Namespace, c.ServiceAccount, c.Kind)
	}
	for _, c := range s.LogCauses {
		gauge(descLogCause, float64(c.Lines), c.Member, c.ID)
	}
	seen := map[string]bool{}
	for _, f := range s.Findings {
		k := f.ID + "\x00" + string(f.Severity) + "\x00" + f.Member
		if !seen[k] {
			seen[k] = true
			gauge(descFinding, 1, f.ID, string(f.Severity), f.Member)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Handler serves /metrics, /healthz (the process serves) and /readyz (an interval has finished).
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		m.mu.Lock()
		ready := m.last != nil
		m.mu.Unlock()
		if !ready {
			http.Error(w, "no interval finished yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// redactLabels redacts each label value in place.
func redactLabels(labels []string) []string {
	for i, l := range labels {
		labels[i] = redact.Text(l)
	}
	return labels
}
