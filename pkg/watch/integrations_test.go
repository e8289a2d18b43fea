// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

var driftScript = [][]fakeMember{healthy, with(healthy, fakeMember{name: "apiserver-4", kid: "k2"}), with(healthy, fakeMember{name: "apiserver-4", kid: "k2"}), healthy}

func TestMetricsHandler(t *testing.T) {
	t.Parallel()
	m := NewMetrics(BuildInfo{Version: "v0.9.0", Revision: "abc123", GoVersion: "go1.26.8"})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before the first interval: %d", code)
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}
	if _, text := get("/metrics"); !strings.Contains(text, `credwatch_build_info{goversion="go1.26.8",revision="abc123",version="v0.9.0"} 1`) {
		t.Errorf("no credwatch_build_info before the first interval:\n%s", text)
	}
	rec, _ := runScript(t, 2, driftScript...)
	for i, evs := range rec.events {
		m.Observe(rec.states[i], evs)
	}
	last := *rec.states[len(rec.states)-1]
	last.LogCauses = []LogCause{{Member: "apiserver-4", ID: "signing-key-unknown", Lines: 3}}
	last.LogTotals = []LogTotal{{Member: "apiserver-4", ID: "signing-key-unknown", Lines: 5}}
	last.Time, last.Took = time.Unix(1700000000, 0), 1500*time.Millisecond
	m.Observe(&last, nil)
	if code, _ := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after an interval: %d", code)
	}
	_, text := get("/metrics")
	for _, want := range []string{
		`credwatch_member_up{member="apiserver-4"} 1`,
		`credwatch_member_ready{member="apiserver-1"} 1`,
		`credwatch_trust{signer="apiserver-1",verifier="apiserver-4"} 0`,
		`credwatch_trust{signer="apiserver-1",verifier="apiserver-2"} 1`,
		`credwatch_held_token_trust{signer="apiserver-1",verifier="apiserver-4"} 0`,
		`credwatch_finding{id="member-key-drift",member="apiserver-4",severity="error"} 1`,
		`credwatch_member_auth_failures_total{member="apiserver-1",result="failure"} 0`,
		`credwatch_auth_failures_total{cause="signing-key-unknown",member="apiserver-4"} 5`,
		`credwatch_log_cause_lines{id="signing-key-unknown",member="apiserver-4"} 3`,
		`credwatch_member_info{issuer="https://issuer",kid="k2",member="apiserver-4",version="v1.36.3"} 1`,
		`credwatch_last_check_timestamp_seconds 1.7000000015e+09`,
		`credwatch_probe_duration_seconds_count 3`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(text, "credwatch_interval") {
		t.Error("metrics still carry credwatch_interval")
	}
	lintMetrics(t, text)
}

// TestAuthFailureCauses: the cause label of credwatch_auth_failures_total is always a catalogue
// ID, whatever the members' log lines say.
func TestAuthFailureCauses(t *testing.T) {
	t.Parallel()
	lc := newLogCauses(nil, time.Minute)
	now := time.Unix(1700000000, 0)
	lc.feed("apiserver-2", "kube-apiserver.log", []string{
		`E1202 10:00:00.000000       1 authentication.go:73] "Unable to authenticate the request" err="[invalid bearer token, square/go-jose: error in cryptographic primitive]"`,
		`E1202 10:00:01.000000       1 authentication.go:73] "Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"`,
		`E1202 10:00:02.000000       1 authentication.go:73] "Unable to authenticate the request" err="[invalid bearer token, something no catalogue entry knows yet]"`,
		`I1202 10:00:03.000000       1 main.go:1] "ordinary line"`,
	}, now)
	lc.current(now.Add(2 * time.Minute)) // every cause quiet: the totals stay
	got := lc.counts()
	if len(got) == 0 {
		t.Fatal("no totals")
	}
	for _, c := range got {
		if _, ok := catalogue.Default().Get(c.ID); !ok {
			t.Errorf("cause %q is not a catalogue ID", c.ID)
		}
	}
	t.Logf("totals %+v", got)
}

func TestKubeEventsOnFindings(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	k := NewKubeEventsFor(cs)
	rec, _ := runScript(t, 4, driftScript...)
	for i, evs := range rec.events {
		k.Observe(rec.states[i], evs)
	}
	deadline := time.Now().Add(10 * time.Second)
	var reasons []string
	for time.Now().Before(deadline) {
		list, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		reasons = reasons[:0]
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == "Endpoints" && e.InvolvedObject.Name == "kubernetes" {
				reasons = append(reasons, e.Type+"/"+e.Reason)
			}
		}
		if len(reasons) >= 2 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	k.Stop()
	got := strings.Join(reasons, " ")
	if !strings.Contains(got, "Warning/MemberKeyDrift") || !strings.Contains(got, "Normal/MemberKeyDriftCleared") {
		t.Errorf("events on default/kubernetes: %v", reasons)
	}
}

func TestReason(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"member-key-drift": "MemberKeyDrift", "member-unreachable": "MemberUnreachable", "": ""} {
		if got := Reason(in); got != want {
			t.Errorf("Reason(%q) = %q, want %q", in, got, want)
		}
	}
}

// externalRef finds anything a browser would fetch (as in pkg/logs).
var externalRef = regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:|//)|url\(\s*["']?(https?:|//)|<link\b|<script\b`)

func timelinePage(t *testing.T) string {
	t.Helper()
	down := with(healthy[:2], fakeMember{name: "apiserver-3", kid: "k1", down: true})
	tl := NewTimeline()
	rec, sum := runScript(t, 6, healthy, driftScript[1], driftScript[2], down, healthy, healthy)
	for i, evs := range rec.events {
		tl.Observe(rec.states[i], evs)
	}
	var b bytes.Buffer
	if err := tl.WriteHTML(&b, sum); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "watch.html")
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return page
}

func TestTimelineSelfContained(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(timelinePage(t))
	if err != nil {
		t.Fatal(err)
	}
	if m := externalRef.Find(b); m != nil {
		t.Errorf("page refers to an external resource: %s", m)
	}
	for _, want := range []string{"<svg", "apiserver-4", "apiserver-1 → apiserver-4", "held apiserver-1 → apiserver-4", "signing-key-unknown", "member-key-drift", "down"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("page lacks %q", want)
		}
	}
	if bytes.Contains(b, []byte("token-of-")) {
		t.Error("a token is on the page")
	}
}

// TestTimelineInChromium renders the page in headless Chromium: the DOM must hold one lane per
// member, the rejected cells and the events.
func TestTimelineInChromium(t *testing.T) {
	t.Parallel()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		// make test installs it (hack/deps.sh); only the unit tier (-short) may go without.
		if !testing.Short() || os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed: hack/deps.sh installs Debian's chromium")
		}
		t.Skip("chromium is not installed (hack/deps.sh installs Debian's chromium): skipped under -short")
	}
	page := timelinePage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+page)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	dom := stdout.String()
	for _, want := range []string{`id="timeline"`, `class="member">apiserver-1<`, `class="member">apiserver-4<`, "held apiserver-1 → apiserver-4",
		`id="events"`, "finding-raised", "member-down", `id="summary"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	if n := strings.Count(dom, "<rect"); n < 8 {
		t.Errorf("rendered DOM has %d rects", n)
	}
}

// TestMetricsDocumented: docs/metrics.md lists every metric the registry describes.
func TestMetricsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan *prometheus.Desc)
	go func() {
		NewMetrics(BuildInfo{}).reg.Describe(ch)
		close(ch)
	}()
	name := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range ch {
		n := name.FindStringSubmatch(d.String())
		if n == nil {
			t.Fatalf("no name in %s", d)
		}
		if strings.HasPrefix(n[1], "credwatch_") && !bytes.Contains(doc, []byte("| `"+n[1]+"` |")) {
			t.Errorf("docs/metrics.md has no row for %s", n[1])
		}
	}
}
