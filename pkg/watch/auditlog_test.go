// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/credwatch/credwatch/pkg/check"
)

// TestAuditLogServiceAccounts: real-shaped audit events appended to a member's audit log after
// watch started go through the tail into the state and credwatch_serviceaccount_tokens_total,
// once per request, with a bound of one account per kind.
func TestAuditLogServiceAccounts(t *testing.T) {
	t.Parallel()
	events, err := os.ReadFile("testdata/audit/apiserver-1.log")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	appendFile(t, path, `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","annotations":{"authentication.k8s.io/legacy-token":"system:serviceaccount:old:before-watch"}}`+"\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	feed := ObserverFunc(func(*State, []Event) { // after rec, in the loop goroutine
		switch len(rec.states) {
		case 1: // read from its end at the first interval: the line before is not counted
			appendFile(t, path, string(events))
		case 3:
			cancel()
		}
	})
	w, err := New(Config{Check: check.Config{Timeout: time.Second}, Interval: 10 * time.Millisecond,
		Fetch: script(healthy), Observers: []Observer{rec, feed},
		AuditLogs: []LogFile{{Host: "apiserver-1", Path: path}}, AuditServiceAccounts: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Run(ctx)
	if len(rec.states) < 3 {
		t.Fatalf("%d intervals ran, want 3", len(rec.states))
	}
	want := []SATokens{
		{Member: "apiserver-1", Kind: "legacy", Namespace: "ci", ServiceAccount: "deployer", Requests: 1},
		{Member: "apiserver-1", Kind: "stale", Namespace: "", ServiceAccount: "other", Requests: 1},
		{Member: "apiserver-1", Kind: "stale", Namespace: "monitoring", ServiceAccount: "prometheus", Requests: 2},
	}
	if got := rec.states[0].ServiceAccountTokens; len(got) != 0 {
		t.Errorf("interval 1 counted the lines written before watch: %+v", got)
	}
	last := rec.states[2]
	if !reflect.DeepEqual(last.ServiceAccountTokens, want) {
		t.Errorf("got %+v\nwant %+v", last.ServiceAccountTokens, want)
	}
	if why := last.Sources["audit-log "+path]; why != "" {
		t.Errorf("the audit log is listed unavailable: %s", why)
	}

	m := NewMetrics(BuildInfo{})
	m.Observe(last, nil)
	text := scrape(t, m)
	for _, line := range []string{
		`credwatch_serviceaccount_tokens_total{kind="stale",member="apiserver-1",namespace="monitoring",serviceaccount="prometheus"} 2`,
		`credwatch_serviceaccount_tokens_total{kind="stale",member="apiserver-1",namespace="",serviceaccount="other"} 1`,
		`credwatch_serviceaccount_tokens_total{kind="legacy",member="apiserver-1",namespace="ci",serviceaccount="deployer"} 1`,
	} {
		if !strings.Contains(text, line) {
			t.Errorf("metrics lack %s", line)
		}
	}
	if n := strings.Count(text, "\ncredwatch_serviceaccount_tokens_total{"); n != len(want) {
		t.Errorf("%d series, want %d:\n%s", n, len(want), text)
	}
	lintMetrics(t, text)
}

// TestAuditLogNotAudit: a file whose new lines are not audit events is listed unavailable, and
// counts nothing.
func TestAuditLogNotAudit(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kube-apiserver.log")
	appendFile(t, path, "")
	al := newAuditLogs([]LogFile{{Host: "apiserver-1", Path: path}}, 5)
	defer al.close()
	al.poll()
	appendFile(t, path, `E1202 10:00:00.000000       1 authentication.go:73] "Unable to authenticate the request" err="[invalid bearer token, authentication.k8s.io/legacy-token]"`+"\n")
	al.poll()
	if why := al.errs["audit-log "+path]; !strings.Contains(why, "not an audit log") {
		t.Errorf("unavailable: %q, want not an audit log", why)
	}
	al.poll() // nothing new: still unavailable
	if why := al.errs["audit-log "+path]; !strings.Contains(why, "not an audit log") {
		t.Errorf("unavailable after a poll that read nothing: %q, want not an audit log", why)
	}
	appendFile(t, path, `{"kind":"Event","apiVersion":"audit.k8s.io/v1","stage":"ResponseComplete"}`+"\n")
	al.poll()
	if why, ok := al.errs["audit-log "+path]; ok {
		t.Errorf("unavailable after an audit event: %q", why)
	}
	if got := al.acct.list(); len(got) != 0 {
		t.Errorf("counted %+v", got)
	}
}

// lintMetrics fails t on what client_golang's linter finds in the credwatch_ metrics of a
// /metrics page: the naming guide (units, _total, _info, no camel case).
func lintMetrics(t *testing.T, text string) {
	t.Helper()
	problems, err := promlint.New(strings.NewReader(text)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "credwatch_") {
			t.Errorf("promlint: %s: %s", p.Metric, p.Text)
		}
	}
}

// scrape returns m's /metrics page.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rr := httptest.NewRecorder()
	m.Handler().ServeHTTP(rr, httptest.NewRequest("GET", "/metrics", nil))
	b, err := io.ReadAll(rr.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
