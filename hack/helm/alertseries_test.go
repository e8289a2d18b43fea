// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package helm

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/watch"
)

var update = flag.Bool("update", false, "rewrite ../promtool/alerts_test.yaml (and the lab's) from the watcher's series")

const (
	alertsFile = chartDir + "/files/alerts.yaml"
	// alertTests is the promtool rule test hack/promtool runs (its rule_files path is relative to it).
	alertTests = "../promtool/alerts_test.yaml"
	// step is the scrape interval of the rule tests: one scrape of the watcher per step.
	step = 15 * time.Second
)

// The labels Prometheus adds to every series it scrapes from the chart's ServiceMonitor.
var targetLabels = map[string]string{"job": "credwatch", "instance": "10.0.0.7:9090"}

// promtool's rule test file (docs: prometheus.io, "Unit testing for rules").
type ruleTestFile struct {
	RuleFiles          []string    `json:"rule_files"`
	EvaluationInterval string      `json:"evaluation_interval"`
	Tests              []testGroup `json:"tests"`
}

type testGroup struct {
	Name          string       `json:"name"`
	Interval      string       `json:"interval"`
	InputSeries   []inputSerie `json:"input_series"`
	AlertRuleTest []alertTest  `json:"alert_rule_test"`
}

type inputSerie struct {
	Series string `json:"series"`
	Values string `json:"values"`
}

type alertTest struct {
	EvalTime  string     `json:"eval_time"`
	Alertname string     `json:"alertname"`
	ExpAlerts []expAlert `json:"exp_alerts"`
}

type expAlert struct {
	ExpLabels      map[string]string `json:"exp_labels"`
	ExpAnnotations map[string]string `json:"exp_annotations"`
}

// rule is one alerting rule of files/alerts.yaml.
type rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func loadRules(t *testing.T) []rule {
	t.Helper()
	raw, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []rule `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(raw, &f); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	var out []rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

var labelRef = regexp.MustCompile(`\{\{\s*\$labels\.(\w+)\s*\}\}`)

// expect is the alert r raises on a series with labels ls (the target's labels added): the
// series' labels under the rule's, its annotations rendered. The rules' templates use only
// {{ $labels.NAME }}; anything else fails the test rather than being guessed.
func expect(t *testing.T, r rule, ls map[string]string) expAlert {
	t.Helper()
	e := expAlert{ExpLabels: maps.Clone(targetLabels), ExpAnnotations: map[string]string{}}
	maps.Copy(e.ExpLabels, ls)
	maps.Copy(e.ExpLabels, r.Labels)
	for k, v := range r.Annotations {
		s := labelRef.ReplaceAllStringFunc(v, func(ref string) string { return e.ExpLabels[labelRef.FindStringSubmatch(ref)[1]] })
		if strings.Contains(s, "{{") {
			t.Fatalf("%s: annotation %s uses a template this test does not render: %s", r.Alert, k, v)
		}
		e.ExpAnnotations[k] = s
	}
	return e
}

// scrape is one GET /metrics of the watcher.
type scrape struct {
	at   time.Time
	text []byte
}

// seriesOf turns consecutive scrapes, one a step, into promtool's input_series: every credwatch_
// gauge and counter sample with the target's labels, "_" where a scrape lacked the series. A
// _timestamp_seconds value v of scrape i is put on the test's clock: at(i, v) seconds after the
// first scrape.
func seriesOf(t *testing.T, scrapes []scrape, at func(i int, v float64) float64) []inputSerie {
	t.Helper()
	vals := map[string][]string{}
	for i, s := range scrapes {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(bytes.NewReader(s.text))
		if err != nil {
			t.Fatalf("scrape %d: %v", i, err)
		}
		for name, f := range fams {
			if !strings.HasPrefix(name, "credwatch_") {
				continue
			}
			for _, m := range f.GetMetric() {
				var v float64
				switch {
				case m.GetGauge() != nil:
					v = m.GetGauge().GetValue()
				case m.GetCounter() != nil:
					v = m.GetCounter().GetValue()
				default: // histograms: no rule reads them
					continue
				}
				if strings.HasSuffix(name, "_timestamp_seconds") {
					v = at(i, v)
				}
				ls := maps.Clone(targetLabels)
				for _, lp := range m.GetLabel() {
					ls[lp.GetName()] = lp.GetValue()
				}
				k := selector(name, ls)
				if vals[k] == nil {
					vals[k] = slices.Repeat([]string{"_"}, len(scrapes))
				}
				vals[k][i] = strconv.FormatFloat(v, 'f', -1, 64)
			}
		}
	}
	out := make([]inputSerie, 0, len(vals))
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		out = append(out, inputSerie{Series: k, Values: compact(vals[k])})
	}
	return out
}

func selector(name string, ls map[string]string) string {
	parts := make([]string, 0, len(ls))
	for _, k := range slices.Sorted(maps.Keys(ls)) {
		parts = append(parts, fmt.Sprintf("%s=%q", k, ls[k]))
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// compact writes runs of one value in promtool's expanding notation ("1x4" is five 1s); blanks
// ("_") stay one by one.
func compact(vs []string) string {
	var out []string
	for i := 0; i < len(vs); {
		j := i
		for j+1 < len(vs) && vs[j+1] == vs[i] {
			j++
		}
		switch {
		case vs[i] == "_":
			out = append(out, slices.Repeat([]string{"_"}, j-i+1)...)
		case j > i:
			out = append(out, fmt.Sprintf("%sx%d", vs[i], j-i))
		default:
			out = append(out, vs[i])
		}
		i = j + 1
	}
	return strings.Join(out, " ")
}

func TestCompact(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"1 1 1 0":     "1x2 0",
		"_ _ 1":       "_ _ 1",
		"0 15 30":     "0 15 30",
		"2 _ 2 2 2 _": "2 _ 2x2 _",
	} {
		if got := compact(strings.Fields(in)); got != want {
			t.Errorf("compact(%s) = %q, want %q", in, got, want)
		}
	}
}

// checkpoint is an evaluation of every alert at one time: want lists the alerts that must be
// firing then, each with the labels of the series it fires on; every other alert must be silent.
type checkpoint struct {
	at   time.Duration
	want map[string][]map[string]string
}

// group builds one promtool test group: the series of scrapes and, at each checkpoint, every
// alert of rules evaluated.
func group(t *testing.T, name string, rules []rule, series []inputSerie, cps ...checkpoint) testGroup {
	t.Helper()
	g := testGroup{Name: name, Interval: step.String(), InputSeries: series}
	for _, cp := range cps {
		for alert := range cp.want {
			if !slices.ContainsFunc(rules, func(r rule) bool { return r.Alert == alert }) {
				t.Fatalf("%s: no alert %s in %s", name, alert, alertsFile)
			}
		}
		for _, r := range rules {
			at := alertTest{EvalTime: promDuration(cp.at), Alertname: r.Alert, ExpAlerts: []expAlert{}}
			for _, ls := range cp.want[r.Alert] {
				at.ExpAlerts = append(at.ExpAlerts, expect(t, r, ls))
			}
			g.AlertRuleTest = append(g.AlertRuleTest, at)
		}
	}
	return g
}

// promDuration writes d as Prometheus reads durations ("1m30s", not Go's "1m30s0ms" forms).
func promDuration(d time.Duration) string {
	return model.Duration(d).String()
}

// registryWatch drives a watch.Metrics with states, one a step, and scrapes it after each: the
// series are what the watcher's own registry serves. A nil state is an interval that did not
// finish (the scrape still answers, with the last state).
func registryWatch(t *testing.T, states []*watch.State) []scrape {
	t.Helper()
	m := watch.NewMetrics(watch.BuildInfo{Version: "v0.1.0", Revision: "0000000", GoVersion: "go1.26.8"})
	h := m.Handler()
	var out []scrape
	for _, s := range states {
		if s != nil {
			m.Observe(s, nil)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		out = append(out, scrape{text: rec.Body.Bytes()})
	}
	return out
}

// cluster is a synthetic control plane at one step: members by name, each signing with kid.
type cluster struct {
	step    int
	kids    map[string]string   // member → the key it signs with (and the only one it accepts)
	down    map[string]bool     // members that do not answer
	unready map[string]bool     // members that answer, /readyz failing
	lb      string              // a member the load balancer sends to while unready
	logs    map[string][]string // member → causes its log names this step, one line each
	own     bool                // the watcher's own requests through the endpoint fail
}

// state is the watch.State a watcher would reduce c to at its step; totals carries the log
// counters between steps.
func (c cluster) state(totals map[[2]string]int) *watch.State {
	s := &watch.State{Interval: c.step + 1, Time: time.Unix(int64(c.step)*int64(step/time.Second), 0)}
	names := slices.Sorted(maps.Keys(c.kids))
	add := func(id, member string) {
		s.Findings = append(s.Findings, finding.Finding{ID: id, Severity: catalogue.Default().MustGet(id).Severity, Member: member})
	}
	for _, n := range names {
		ms := watch.MemberState{Endpoint: check.Endpoint{Name: n, URL: "https://" + n + ":6443"}, Up: !c.down[n], Ready: !c.down[n] && !c.unready[n]}
		if !c.down[n] {
			ms.Version, ms.SigningKID, ms.Issuer = "v1.36.3", c.kids[n], "https://kubernetes.default.svc.cluster.local"
			ms.AuthFailures = map[string]float64{"error": 0}
		} else {
			add("member-unreachable", n)
		}
		if c.unready[n] && !c.down[n] {
			add("member-not-ready", n)
		}
		s.Members = append(s.Members, ms)
	}
	for _, signer := range names {
		for _, verifier := range names {
			// A member that rejects the watcher's token mints none: its row is unknown, as are a
			// member's that is down, and its column.
			if c.down[signer] || c.down[verifier] || c.kids[signer] != c.kids[names[0]] {
				continue
			}
			ok := c.kids[signer] == c.kids[verifier]
			s.Trust = append(s.Trust, watch.Cell{Signer: signer, Verifier: verifier, Accepted: ok})
			s.Held = append(s.Held, watch.Cell{Signer: signer, Verifier: verifier, Accepted: ok})
		}
	}
	for _, n := range names {
		if c.kids[n] != c.kids[names[0]] {
			add("member-key-drift", n)
		}
	}
	if c.lb != "" {
		add("lb-sends-to-unready", c.lb)
	}
	if c.own {
		add("own-requests-refused", "")
	}
	for _, n := range slices.Sorted(maps.Keys(c.logs)) {
		for _, id := range c.logs[n] {
			totals[[2]string{n, id}]++
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(totals), func(a, b [2]string) int { return strings.Compare(a[0]+a[1], b[0]+b[1]) }) {
		s.LogTotals = append(s.LogTotals, watch.LogTotal{Member: k[0], ID: k[1], Lines: totals[k]})
	}
	return s
}

// timeline is the states of clusters step 0, 1, …; a nil cluster is a step with no interval.
func timeline(cs []*cluster) []*watch.State {
	totals := map[[2]string]int{}
	out := make([]*watch.State, len(cs))
	for i, c := range cs {
		if c != nil {
			c.step = i
			out[i] = c.state(totals)
		}
	}
	return out
}

func steps(n int, f func(i int) *cluster) []*cluster {
	out := make([]*cluster, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func healthy() *cluster {
	return &cluster{kids: map[string]string{"apiserver-1": "k1", "apiserver-2": "k1", "apiserver-3": "k1"}}
}

// registryGroups are the rule tests on series from the watcher's registry: a healthy cluster
// that a member with its own key joins, members down and unready, and a watcher that stalls.
func registryGroups(t *testing.T, rules []rule) []testGroup {
	t.Helper()
	same := func(_ int, v float64) float64 { return v } // the states' times are on the test's clock already
	drift := steps(30, func(i int) *cluster {
		c := healthy()
		if i >= 10 {
			c.kids["apiserver-4"] = "k2"
			c.logs = map[string][]string{"apiserver-4": {"signing-key-unknown", "signing-key-unknown"}}
		}
		return c
	})
	roll := steps(21, func(i int) *cluster {
		c := healthy()
		if i >= 6 {
			c.down = map[string]bool{"apiserver-2": true}
			c.unready = map[string]bool{"apiserver-3": true}
			c.lb = "apiserver-3"
		}
		return c
	})
	// The finding's series leaves the scrape when the requests recover; promtool's input has no
	// staleness marker for that ("_"), so the alert ends with the 5-minute lookback.
	blind := steps(44, func(i int) *cluster {
		c := healthy()
		c.own = i >= 6 && i < 16
		return c
	})
	stall := steps(40, func(i int) *cluster {
		if i >= 4 {
			return nil
		}
		return healthy()
	})
	pair := func(s, v string) map[string]string { return map[string]string{"signer": s, "verifier": v} }
	return []testGroup{
		group(t, "registry: a member joins with its own signing key", rules, seriesOf(t, registryWatch(t, timeline(drift)), same),
			checkpoint{at: 2 * time.Minute},
			checkpoint{at: 7 * time.Minute, want: map[string][]map[string]string{
				"CredwatchTrustBroken":       {pair("apiserver-1", "apiserver-4"), pair("apiserver-2", "apiserver-4"), pair("apiserver-3", "apiserver-4")},
				"CredwatchHeldTokenRejected": {pair("apiserver-1", "apiserver-4"), pair("apiserver-2", "apiserver-4"), pair("apiserver-3", "apiserver-4")},
				"CredwatchKeyOrIssuerDrift":  {{"id": "member-key-drift", "member": "apiserver-4"}},
				"CredwatchAuthFailures":      {{"member": "apiserver-4", "cause": "signing-key-unknown"}},
			}}),
		group(t, "registry: a member down, one unready behind the load balancer", rules, seriesOf(t, registryWatch(t, timeline(roll)), same),
			checkpoint{at: time.Minute},
			checkpoint{at: 5 * time.Minute, want: map[string][]map[string]string{
				"CredwatchMemberDown":       {{"member": "apiserver-2"}},
				"CredwatchMemberUnready":    {{"member": "apiserver-3"}},
				"CredwatchLBSendsToUnready": {{"id": "lb-sends-to-unready", "member": "apiserver-3"}},
			}}),
		group(t, "registry: the watcher's own requests time out, then recover", rules, seriesOf(t, registryWatch(t, timeline(blind)), same),
			checkpoint{at: time.Minute},
			checkpoint{at: 3 * time.Minute, want: map[string][]map[string]string{
				"CredwatchOwnRequestsFailing": {{"id": "own-requests-refused"}},
			}},
			checkpoint{at: 10 * time.Minute}),
		group(t, "registry: the watcher's intervals stop, its server still answers", rules, seriesOf(t, registryWatch(t, timeline(stall)), same),
			checkpoint{at: 4 * time.Minute},
			checkpoint{at: 9 * time.Minute, want: map[string][]map[string]string{
				"CredwatchNotWatching": {{}},
			}}),
	}
}

// ruleTests renders the promtool rule test of groups, reading the rules from ruleFile.
func ruleTests(t *testing.T, ruleFile, header string, groups []testGroup) []byte {
	t.Helper()
	f := ruleTestFile{RuleFiles: []string{ruleFile}, EvaluationInterval: step.String(), Tests: groups}
	b, err := yaml.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte(header), b...)
}

// writeRuleTests renders the promtool rule test of groups and compares it with path, a file of
// hack/promtool (-update rewrites it).
func writeRuleTests(t *testing.T, path, header string, groups []testGroup) {
	t.Helper()
	b := ruleTests(t, "../../deploy/helm/credwatch/files/alerts.yaml", header, groups)
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(old, b) {
		t.Errorf("%s is not what the watcher's series and alerts.yaml give (err %v): go test ./hack/helm -run %s -args -update", path, err, t.Name())
	}
}

// TestAlertRuleTests: ../promtool/alerts_test.yaml, which hack/promtool runs with promtool, is
// generated here from what the watcher's own registry serves, so its series carry the real
// names and labels. Every alert must fire in some checkpoint, and every alert is evaluated at
// every checkpoint: silent unless listed.
func TestAlertRuleTests(t *testing.T) {
	rules := loadRules(t)
	groups := registryGroups(t, rules)
	fired := map[string]bool{}
	for _, g := range groups {
		for _, at := range g.AlertRuleTest {
			fired[at.Alertname] = fired[at.Alertname] || len(at.ExpAlerts) > 0
		}
	}
	for _, r := range rules {
		if !fired[r.Alert] {
			t.Errorf("no test group makes %s fire", r.Alert)
		}
	}
	writeRuleTests(t, alertTests, "# promtool test rules for deploy/helm/credwatch/files/alerts.yaml, run by promtool_test.go.\n"+
		"# Generated by hack/helm's TestAlertRuleTests from the watcher's own metric registry; do not edit\n"+
		"# (go test ./hack/helm -run TestAlertRuleTests -args -update).\n", groups)
}
