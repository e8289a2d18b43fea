// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package helm

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/internal/toolcache"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/watch"
)

// labGap is the watcher's --interval on the lab, and how often the test scrapes it: each scrape
// is one step (15 s) of the rule test.
const labGap = 2 * time.Second

// recorder scrapes a watcher's /metrics every labGap.
type recorder struct {
	mu      sync.Mutex
	scrapes []scrape
	stop    chan struct{}
	done    chan struct{}
}

func record(m *watch.Metrics) *recorder {
	r := &recorder{stop: make(chan struct{}), done: make(chan struct{})}
	h := m.Handler()
	go func() {
		defer close(r.done)
		tick := time.NewTicker(labGap)
		defer tick.Stop()
		for {
			select {
			case <-r.stop:
				return
			case now := <-tick.C:
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
				r.mu.Lock()
				r.scrapes = append(r.scrapes, scrape{at: now, text: rec.Body.Bytes()})
				r.mu.Unlock()
			}
		}
	}()
	return r
}

func (r *recorder) n() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.scrapes)
}

// waitN waits until n scrapes were taken, calling each on the way once per scrape.
func (r *recorder) waitN(n int, each func()) {
	for seen := r.n(); seen < n; {
		time.Sleep(labGap / 4)
		if now := r.n(); now > seen {
			seen = now
			if each != nil {
				each()
			}
		}
	}
}

// waitFor waits (at most within) until a scrape's text satisfies ok.
func (r *recorder) waitFor(t *testing.T, within time.Duration, what string, ok func(text string) bool) {
	t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(labGap / 4) {
		r.mu.Lock()
		last := []byte(nil)
		if len(r.scrapes) > 0 {
			last = r.scrapes[len(r.scrapes)-1].text
		}
		r.mu.Unlock()
		if last != nil && ok(string(last)) {
			return
		}
	}
	t.Fatalf("%s: not within %s", what, within)
}

func (r *recorder) end() []scrape {
	close(r.stop)
	<-r.done
	return r.scrapes
}

// promtool runs hack/promtool's promtool (a Go tool of that module, built without service
// discovery once per machine by hack/tools.sh).
func promtool(t *testing.T, args ...string) {
	t.Helper()
	bin, err := toolcache.Path("../..", "promtool")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
	t.Logf("promtool %v:\n%s", args, out)
}

// TestIntegrationAlertsOnLab runs a watcher on a real lab, scrapes its /metrics every interval,
// turns the scrapes into promtool's input_series and proves with promtool test rules that on
// them the healthy lab raises no alert, a member with its own signing key (and a pod presenting
// an old token to it) raises trust, held-token, drift and auth-failure alerts that clear when it
// leaves, and a watcher whose intervals stop raises CredwatchNotWatching. -update also writes
// the test to ../promtool/lab_alerts_test.yaml, which hack/promtool replays without a lab.
func TestIntegrationAlertsOnLab(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 3})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := watch.NewMetrics(watch.BuildInfo{Version: "v0.1.0", Revision: "0000000", GoVersion: "go1.26.8"})
	var logs []watch.LogFile
	for i := 1; i <= 6; i++ {
		name := fmt.Sprintf("apiserver-%d", i)
		logs = append(logs, watch.LogFile{Host: name, Path: filepath.Join(l.Dir(), "logs", name+".log")})
	}
	w, err := watch.New(watch.Config{
		Check:    check.Config{REST: l.RESTConfig(), CreateProbeSA: true, Timeout: labGap},
		Interval: labGap,
		Endpoints: func() []string {
			var out []string
			for _, mem := range l.Members() {
				out = append(out, mem.URL)
			}
			return out
		},
		Observers: []watch.Observer{m},
		LogFiles:  logs,
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopWatch := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.Run(runCtx); close(done) }()
	defer func() { stopWatch(); <-done }()

	rec := record(m)
	whole := func(text string) bool {
		for _, a := range []string{"apiserver-1", "apiserver-2", "apiserver-3"} {
			for _, b := range []string{"apiserver-1", "apiserver-2", "apiserver-3"} {
				if !strings.Contains(text, fmt.Sprintf(`credwatch_trust{signer=%q,verifier=%q} 1`, a, b)) {
					return false
				}
			}
		}
		return !strings.Contains(text, "credwatch_finding{")
	}
	rec.waitFor(t, time.Minute, "healthy lab", whole)
	// Each checkpoint follows 14 steps (3.5 min) of a settled state: longer than every alert's for.
	const settle = 14
	rec.waitN(rec.n()+settle, nil)
	healthyAt := rec.n() - 1

	nm, err := l.AddMember(ctx, lab.MemberOptions{SAKey: lab.SAKeyNew})
	if err != nil {
		t.Fatal(err)
	}
	if nm.Name != "apiserver-4" {
		t.Fatalf("the new member is %s, want apiserver-4", nm.Name)
	}
	rec.waitFor(t, time.Minute, "broken pairs of apiserver-4", func(text string) bool {
		return strings.Contains(text, `credwatch_trust{signer="apiserver-1",verifier="apiserver-4"} 0`) &&
			strings.Contains(text, `credwatch_finding{id="member-key-drift",member="apiserver-4"`)
	})
	// A pod's token from before, presented to the drifted member at every step: its log says why.
	rec.waitN(rec.n()+settle, func() { presentToken(t, l, "apiserver-1", "apiserver-4") })
	driftAt := rec.n() - 1
	if err := l.RemoveMember(ctx, nm.Name, lab.RemoveOptions{}); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, time.Minute, "apiserver-4 gone", func(text string) bool {
		return whole(text) && !strings.Contains(text, `verifier="apiserver-4"`)
	})
	// The auth-failure counter's 5-min window (20 steps) drains too.
	rec.waitN(rec.n()+22, nil)
	clearedAt := rec.n() - 1

	stopWatch()
	<-done
	rec.waitN(rec.n()+28, nil) // the server still answers, the last check gets older
	stalledAt := rec.n() - 1
	scrapes := rec.end()

	rules := loadRules(t)
	onClock := func(i int, v float64) float64 { // a timestamp as far before scrape i as it really was, in steps
		age := scrapes[i].at.Sub(time.Unix(0, int64(v*1e9))).Seconds()
		return float64(i)*step.Seconds() - age*float64(step/labGap)
	}
	at := func(i int) time.Duration { return time.Duration(i) * step }
	pair := func(s, v string) map[string]string { return map[string]string{"signer": s, "verifier": v} }
	// The token held since apiserver-4 appeared stays held, and rejected, after it left (until 80 %
	// of its lifetime): pods holding such a token fail too, so the alert rightly stays.
	var broken, held, departed []map[string]string
	for _, o := range []string{"apiserver-1", "apiserver-2", "apiserver-3"} {
		broken = append(broken, pair(o, "apiserver-4"), pair("apiserver-4", o))
		held = append(held, pair(o, "apiserver-4"), pair("apiserver-4", o))
		departed = append(departed, pair("apiserver-4", o))
	}
	g := group(t, "lab: a watcher on a real control plane", rules, seriesOf(t, scrapes, onClock),
		checkpoint{at: at(healthyAt)},
		checkpoint{at: at(driftAt), want: map[string][]map[string]string{
			"CredwatchTrustBroken":       broken,
			"CredwatchHeldTokenRejected": held,
			"CredwatchKeyOrIssuerDrift":  {{"id": "member-key-drift", "member": "apiserver-4"}},
			"CredwatchAuthFailures":      {{"member": "apiserver-4", "cause": "signing-key-unknown"}},
		}},
		checkpoint{at: at(clearedAt), want: map[string][]map[string]string{"CredwatchHeldTokenRejected": departed}},
		checkpoint{at: at(stalledAt), want: map[string][]map[string]string{"CredwatchNotWatching": {{}}, "CredwatchHeldTokenRejected": departed}},
	)
	abs, err := filepath.Abs(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	header := "# promtool test rules on series scraped from a watcher on a real lab, run by promtool_test.go.\n" +
		"# Written by hack/helm's TestIntegrationAlertsOnLab -args -update; do not edit.\n"
	live := filepath.Join(t.TempDir(), "lab_alerts_test.yaml")
	if err := os.WriteFile(live, ruleTests(t, abs, header, []testGroup{g}), 0o644); err != nil {
		t.Fatal(err)
	}
	promtool(t, "test", "rules", live)
	if *update {
		if err := os.WriteFile("../promtool/lab_alerts_test.yaml", ruleTests(t, "../../deploy/helm/credwatch/files/alerts.yaml", header, []testGroup{g}), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// presentToken sends a token minted through signer to verifier as a bearer token, as a pod
// holding it would: a verifier that does not trust it logs why.
func presentToken(t *testing.T, l *lab.Lab, signer, verifier string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := kubernetes.NewForConfig(l.MemberRESTConfig(signer))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(check.DefaultProbeNamespace).CreateToken(ctx, check.DefaultProbeName,
		&authv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Errorf("mint a token through %s: %v", signer, err)
		return
	}
	rc := l.MemberRESTConfig(verifier)
	rc.CertData, rc.KeyData, rc.BearerToken = nil, nil, tr.Status.Token
	vc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vc.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err == nil {
		t.Errorf("%s accepts the token minted through %s", verifier, signer)
	}
}
