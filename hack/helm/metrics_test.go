// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package helm

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// metrics is what the test reads from one scrape of the watcher's /metrics.
type metrics struct {
	lastCheck float64               // credwatch_last_check_timestamp_seconds: one value per interval
	up        map[string]float64    // credwatch_member_up by member
	trust     map[[2]string]float64 // credwatch_trust by (signer, verifier)
	findings  []string              // credwatch_finding as id/member
}

// scraper reads the watcher's metrics through the apiserver's service proxy
// (/api/v1/namespaces/NS/services/NAME:PORT/proxy/metrics).
type scraper struct {
	cs  kubernetes.Interface
	ns  string
	svc string // NAME:PORT
}

func (s scraper) scrape(ctx context.Context) (metrics, error) {
	raw, err := s.cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces", s.ns, "services", s.svc, "proxy", "metrics").DoRaw(ctx)
	if err != nil {
		return metrics{}, fmt.Errorf("GET metrics through the service proxy: %w", err)
	}
	return parseMetrics(raw)
}

func parseMetrics(raw []byte) (metrics, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return metrics{}, fmt.Errorf("parse metrics: %w", err)
	}
	m := metrics{up: map[string]float64{}, trust: map[[2]string]float64{}}
	label := func(ls map[string]string, n string) string { return ls[n] }
	for name, f := range fams {
		for _, s := range f.GetMetric() {
			ls := map[string]string{}
			for _, lp := range s.GetLabel() {
				ls[lp.GetName()] = lp.GetValue()
			}
			v := s.GetGauge().GetValue()
			switch name {
			case "credwatch_last_check_timestamp_seconds":
				m.lastCheck = v
			case "credwatch_member_up":
				m.up[label(ls, "member")] = v
			case "credwatch_trust":
				m.trust[[2]string{label(ls, "signer"), label(ls, "verifier")}] = v
			case "credwatch_finding":
				m.findings = append(m.findings, label(ls, "id")+"/"+label(ls, "member"))
			}
		}
	}
	return m, nil
}

// healthy says what is missing for every member in members up and every pair between them
// accepted ("" when nothing).
func (m metrics) healthy(members []string) string {
	var bad []string
	for _, a := range members {
		if m.up[a] != 1 {
			bad = append(bad, a+" not up")
		}
		for _, b := range members {
			if v, ok := m.trust[[2]string{a, b}]; !ok || v != 1 {
				bad = append(bad, fmt.Sprintf("trust %s→%s = %v (present %v)", a, b, v, ok))
			}
		}
	}
	return strings.Join(bad, "; ")
}

// broken says what is missing for the others' tokens being rejected by member (0). The other
// direction, member's tokens presented to the others, must be 0 when present: a member that
// rejects the watcher's own service-account token cannot mint a probe token for it, so that row
// may be unknown (absent).
func (m metrics) broken(member string, others []string) string {
	var bad []string
	for _, o := range others {
		if v, ok := m.trust[[2]string{o, member}]; !ok || v != 0 {
			bad = append(bad, fmt.Sprintf("trust %s→%s = %v (present %v)", o, member, v, ok))
		}
		if v, ok := m.trust[[2]string{member, o}]; ok && v != 0 {
			bad = append(bad, fmt.Sprintf("trust %s→%s = %v", member, o, v))
		}
	}
	if len(bad) > 0 {
		bad = append(bad, "metrics: "+m.String())
	}
	return strings.Join(bad, "; ")
}

// String lists the series the test reads.
func (m metrics) String() string {
	var parts []string
	for k, v := range m.up {
		parts = append(parts, fmt.Sprintf("up{%s}=%v", k, v))
	}
	for k, v := range m.trust {
		parts = append(parts, fmt.Sprintf("trust{%s→%s}=%v", k[0], k[1], v))
	}
	slices.Sort(parts)
	slices.Sort(m.findings)
	return fmt.Sprintf("interval of %.3f: %s; findings %v", m.lastCheck, strings.Join(parts, " "), m.findings)
}

// absent says which series still name member.
func (m metrics) absent(member string) string {
	var bad []string
	for p := range m.trust {
		if slices.Contains(p[:], member) {
			bad = append(bad, fmt.Sprintf("credwatch_trust{signer=%q,verifier=%q}", p[0], p[1]))
		}
	}
	if _, ok := m.up[member]; ok {
		bad = append(bad, "credwatch_member_up of "+member)
	}
	return strings.Join(bad, "; ")
}

func (s scraper) get(ctx context.Context, t *testing.T) metrics {
	t.Helper()
	m, err := s.scrape(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// waitFor scrapes every 500 ms until what returns "" and returns that scrape; it fails the test
// with the last answer after within.
func (s scraper) waitFor(ctx context.Context, t *testing.T, within time.Duration, desc string, what func(metrics) string) metrics {
	t.Helper()
	var last string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		m, err := s.scrape(ctx)
		if err != nil {
			last = err.Error()
			continue
		}
		if last = what(m); last == "" {
			return m
		}
	}
	t.Fatalf("%s: not after %s: %s", desc, within, last)
	return metrics{}
}
