// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package mixin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/credwatch/credwatch/deploy/mixin"
	"github.com/credwatch/credwatch/internal/golden"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

var record = flag.Bool("record", false, "record testdata/key-drift.json, the series of hack/promtool/mixin_lab_alerts_test.yaml, from a real lab (about 17 minutes)")

// The recording's timeline: a scrape every step; the drifted member joins after healthy.
const (
	step    = 15 * time.Second
	healthy = 3 * time.Minute
	drift   = 13 * time.Minute
)

// recordingFile is what the lab recording writes; recordFile, the promtool rule test
// TestPromtoolTests makes of it.
const (
	recordingFile = "testdata/key-drift.json"
	recordFile    = "../../hack/promtool/mixin_lab_alerts_test.yaml"
)

// TestIntegrationRecordKeyDrift records, from a real lab, the series the promtool unit tests of
// the mixin run on: two members that share the service-account key, then a third with its own
// key (the key-drift scenario). Clients present a token minted through every member to every
// member each second, as clients behind a round-robin load balancer do; every 15 s the test
// scrapes each member's /metrics, as a Prometheus would, and keeps the series of the families
// the mixin reads (histograms left out), and writes them to testdata/key-drift.json, which
// TestPromtoolTests turns into hack/promtool/mixin_lab_alerts_test.yaml. It runs only with
// -args -record: it takes 17 minutes of a lab.
func TestIntegrationRecordKeyDrift(t *testing.T) {
	if !*record {
		t.Skip("records " + recordFile + ": go test ./deploy/mixin -run TestIntegrationRecordKeyDrift -timeout 30m -args -record")
	}
	l := labtest.Start(t, lab.Options{Members: 2})
	ctx, cancel := context.WithCancel(context.Background())
	cl := startClients(ctx, t, l)
	original := cl.members()
	var wg sync.WaitGroup
	stop := func() { cancel(); cl.wait(); wg.Wait() }
	defer stop()

	families := map[string]bool{}
	for _, s := range mixin.AllSeries() {
		families[s.Family()] = true
	}
	series := map[string][]string{} // series → value per step ("_" none)
	steps := int((healthy + drift) / step)
	var drifted string
	start := time.Now()
	for i := 0; i <= steps; i++ {
		time.Sleep(time.Until(start.Add(time.Duration(i) * step)))
		if i == int(healthy/step) {
			wg.Add(1)
			go func() { // the drifted member joins without holding up the scrapes
				defer wg.Done()
				m, err := l.AddMember(ctx, lab.MemberOptions{SAKey: lab.SAKeyNew})
				if err != nil {
					t.Errorf("add the drifted member: %v", err)
					return
				}
				drifted = m.Name // read after wg.Wait
				cl.add(m.Name, mintToken(t, l, m.Name))
			}()
		}
		for _, m := range cl.members() {
			inst := instance(t, l, m)
			for name, f := range scrape(t, l, m) {
				if !families[name] || f.GetType() == dto.MetricType_HISTOGRAM {
					continue
				}
				for _, s := range f.GetMetric() {
					key := seriesKey(name, inst, s)
					if series[key] == nil {
						series[key] = slices.Repeat([]string{"_"}, steps+1)
					}
					series[key][i] = strconv.FormatFloat(sampleValue(s), 'g', -1, 64)
				}
			}
		}
	}
	stop()
	if drifted == "" {
		t.Fatal("the drifted member never joined")
	}
	rec := recording{Scenario: "key-drift", Step: step.String(), Healthy: healthy.String(), Drift: drift.String(),
		Drifted: instance(t, l, drifted), Series: map[string]string{}}
	for _, m := range append(original, drifted) {
		rec.Members = append(rec.Members, instance(t, l, m))
	}
	for k, v := range series {
		rec.Series[k] = strings.Join(v, " ")
	}
	data, err := json.MarshalIndent(rec, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(recordingFile, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d series, %d steps; now run go test ./deploy/mixin -run TestPromtoolTests -args -update", recordingFile, len(series), steps+1)
}

func seriesKey(name, inst string, m *dto.Metric) string {
	labels := []string{fmt.Sprintf("instance=%q", inst), `job="apiserver"`}
	for _, lp := range m.GetLabel() {
		labels = append(labels, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
	}
	slices.Sort(labels)
	return name + "{" + strings.Join(labels, ",") + "}"
}

func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	}
	return m.GetUntyped().GetValue()
}

// recording is what TestIntegrationRecordKeyDrift scraped (testdata/key-drift.json).
type recording struct {
	Scenario string   `json:"scenario"`
	Step     string   `json:"step"`
	Healthy  string   `json:"healthy"`
	Drift    string   `json:"drift"`
	Members  []string `json:"members"` // instance labels, the drifted member's last
	Drifted  string   `json:"drifted"`
	// Series maps each series to its values, one per step in promtool's notation ("_": none).
	Series map[string]string `json:"series"`
}

// TestPromtoolTests: hack/promtool/mixin_lab_alerts_test.yaml is the recorded key drift
// (testdata/key-drift.json, written by TestIntegrationRecordKeyDrift) with what the mixin's
// current rules must do on it; -update rewrites it, so that changing a rule's text needs no new
// recording. What must fire on it: nothing at the end of the healthy phase; at the end,
// CredwatchAPIServerRejectsWhatOthersAccept for the drifted member alone, and on every member
// CredwatchAPIServerAuthFailures and CredwatchAPIServerTokenCacheErrors (a token with an unknown
// key is an authenticator error, and errors are not cached: the recording showed it); nothing else.
func TestPromtoolTests(t *testing.T) {
	data, err := os.ReadFile(recordingFile)
	if err != nil {
		t.Fatal(err)
	}
	var rec recording
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%s: %v", recordingFile, err)
	}
	out, err := promtoolTest(rec)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, recordFile, out, *update)
}

func promtoolTest(rec recording) ([]byte, error) {
	groups, err := mixin.Groups(mixin.DefaultConfig())
	if err != nil {
		return nil, err
	}
	healthy, err := time.ParseDuration(rec.Healthy)
	if err != nil {
		return nil, fmt.Errorf("%s: healthy: %w", recordingFile, err)
	}
	drift, err := time.ParseDuration(rec.Drift)
	if err != nil {
		return nil, fmt.Errorf("%s: drift: %w", recordingFile, err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `# promtool test rules for the credential mixin (deploy/mixin), run by promtool_test.go, on series
# recorded from a real lab: every %s, each member's /metrics while clients presented a token
# minted through every member to every member; two members sharing the service-account key for
# %s, then a third with its own key (key-drift) for %s (deploy/mixin/testdata/key-drift.json,
# recorded by TestIntegrationRecordKeyDrift). Generated by deploy/mixin's TestPromtoolTests; do
# not edit (go test ./deploy/mixin -run TestPromtoolTests -args -update).
evaluation_interval: 15s
rule_files:
- ../../deploy/mixin/rules.yaml
- ../../deploy/mixin/alerts.yaml
tests:
- interval: %s
  input_series:
`, rec.Step, rec.Healthy, rec.Drift, rec.Step)
	for _, k := range slices.Sorted(maps.Keys(rec.Series)) {
		fmt.Fprintf(&b, "  - series: '%s'\n    values: '%s'\n", k, rec.Series[k])
	}
	b.WriteString("  alert_rule_test:\n")
	firing := map[string][]string{
		"CredwatchAPIServerRejectsWhatOthersAccept": {rec.Drifted},
		"CredwatchAPIServerAuthFailures":            rec.Members,
		"CredwatchAPIServerTokenCacheErrors":        rec.Members,
	}
	for _, at := range []time.Duration{healthy, healthy + drift} {
		for _, g := range groups {
			for _, r := range g.Rules {
				if r.Alert == "" {
					continue
				}
				fmt.Fprintf(&b, "  - alertname: %s\n    eval_time: %s\n", r.Alert, strings.TrimSuffix(at.String(), "0s"))
				if at == healthy || len(firing[r.Alert]) == 0 {
					b.WriteString("    exp_alerts: []\n")
					continue
				}
				b.WriteString("    exp_alerts:\n")
				for _, inst := range slices.Sorted(slices.Values(firing[r.Alert])) {
					writeExpAlert(&b, r, map[string]string{"instance": inst})
				}
			}
		}
	}
	return b.Bytes(), nil
}
