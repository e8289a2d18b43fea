// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/credentials.html.golden")

// fixtureStart is where the query_range answers in testdata/query_range begin; they run 30 minutes
// at a 30 s step. They are in Prometheus' wire format, shaped like the lab's series (three members
// on loopback ports, one whose failure ratio rises for ten minutes), but written, not recorded:
// there is no Prometheus to record from outside the lab tests.
var fixtureStart = time.Date(2026, 12, 7, 17, 0, 0, 0, time.UTC)

// fixtures answers the credential dashboard's queries: the first whose expression contains the
// text; a query matching none gets an empty matrix ("No data").
var fixtures = []struct{ contains, file string }{
	{" - instance:authentication_attempts_failures_others:ratio_rate5m", "failure_ratio_above_others.json"},
	{"instance:authentication_attempts_failures:ratio_rate5m{", "failure_ratio.json"},
	{"sum by (instance, result) (rate(authentication_attempts{", "attempts_by_result.json"},
	{"serviceaccount_stale_tokens_total", "stale_legacy_tokens.json"},
	{"automatic_reloads_total", "config_reloads.json"},
	{"apiserver_authentication_config_controller_last_config_info", "config_info.json"},
	{"apiserver_client_certificate_expiration_seconds_bucket", "client_cert_lifetime.json"},
	{"$", "error.json"}, // a variable left in the query: Prometheus cannot parse it
}

// fakePrometheus serves /api/v1/query_range from the fixtures and records the queries it got.
type fakePrometheus struct {
	mu      sync.Mutex
	queries []string
}

func (f *fakePrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query_range" || r.ParseForm() != nil {
		http.NotFound(w, r)
		return
	}
	q := r.PostForm.Get("query")
	f.mu.Lock()
	f.queries = append(f.queries, q+" start="+r.PostForm.Get("start")+" end="+r.PostForm.Get("end")+" step="+r.PostForm.Get("step"))
	f.mu.Unlock()
	file := "empty.json"
	for _, fx := range fixtures {
		if strings.Contains(q, fx.contains) {
			file = fx.file
			break
		}
	}
	b, err := os.ReadFile(filepath.Join("testdata/query_range", file))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if file == "error.json" {
		w.WriteHeader(http.StatusBadRequest)
	}
	_, _ = w.Write(b)
}

// fixtureArgs are the flags that draw the credential dashboard over the fixtures' range from the
// Prometheus at promURL into out.
func fixtureArgs(promURL, out string) []string {
	return []string{"--dashboard", "../../" + defaultDashboard, "--prometheus", promURL,
		"--start", fixtureStart.Format(time.RFC3339), "--end", fixtureStart.Add(30 * time.Minute).Format(time.RFC3339),
		"--step", "30s", "--var", "cluster=lab", "--out", out}
}

func testConfig(t *testing.T, promURL string, extra ...string) config {
	t.Helper()
	o, err := parseFlags(append(fixtureArgs(promURL, filepath.Join(t.TempDir(), "shot.png")), extra...), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c, err := o.complete(fixtureStart)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRenderGolden draws the credential dashboard from the recorded answers and compares the page
// with testdata/credentials.html.golden (go test ./hack/dashshot -run TestRenderGolden -args -update).
func TestRenderGolden(t *testing.T) {
	fake := &fakePrometheus{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	c := testConfig(t, srv.URL)
	prom, err := newPrometheus(c.prometheus, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	v, err := draw(context.Background(), c, prom)
	if err != nil {
		t.Fatal(err)
	}
	if len(fake.queries) != 11 {
		t.Errorf("%d queries, want one per panel (11)", len(fake.queries))
	}
	for _, q := range fake.queries {
		if strings.Contains(q, "$") || !strings.Contains(q, `cluster=~"lab", instance=~".*"`) ||
			!strings.HasSuffix(q, " start=1796662800 end=1796664600 step=30") {
			t.Errorf("query %s", q)
		}
	}
	noData := 0
	for _, p := range v.Panels {
		if p.Message == "No data" {
			noData++
		}
	}
	if noData != 4 { // token cache, signer age, signer errors, JWT key sets
		t.Errorf("%d panels say No data, want 4", noData)
	}
	page, err := renderHTML(v)
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/credentials.html.golden"
	if *update {
		if err := os.WriteFile(golden, page, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(page, want) {
		t.Errorf("the page is not %s: go test ./hack/dashshot -run TestRenderGolden -args -update, and look at it", golden)
	}
	for _, s := range []string{"<h1>credwatch / Credentials</h1>", "<b>Cluster</b><span>lab</span>", "<b>Member</b><span>All</span>",
		"127.0.0.1:6444 failure", "60%", "week", `class="message">No data<`, "2026-12-07 17:00:00 to 2026-12-07 17:30:00 UTC, step 30s"} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("page lacks %q", s)
		}
	}
}

// TestDrawErrors: a query Prometheus refuses, and a variable without a value, name the panel.
func TestDrawErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&fakePrometheus{})
	defer srv.Close()
	dash := filepath.Join(t.TempDir(), "d.json")
	if err := os.WriteFile(dash, []byte(`{"title":"t","panels":[{"id":7,"type":"timeseries","title":"P",
		"gridPos":{"h":8,"w":24,"x":0,"y":0},"targets":[{"refId":"B","expr":"up{zone=\"$zone\"}"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := testConfig(t, srv.URL, "--dashboard", dash)
	c.vars = nil
	prom, _ := newPrometheus(c.prometheus, time.Minute)
	_, err := draw(context.Background(), c, prom)
	if want := `panel 7 "P", query B: variable $zone has no value (give --var NAME=VALUE)`; err == nil || err.Error() != want {
		t.Errorf("err %v, want %s", err, want)
	}
	c.vars = map[string][]string{}
	if err := os.WriteFile(dash, []byte(`{"title":"t","templating":{"list":[{"name":"zone","type":"custom","current":{"value":"$x"}}]},
		"panels":[{"id":7,"type":"timeseries","title":"P","gridPos":{"h":8,"w":24,"x":0,"y":0},"targets":[{"refId":"B","expr":"up{zone=\"$zone\"}"}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = draw(context.Background(), c, prom)
	if want := `panel 7 "P", query B: query_range: HTTP 400: bad_data: invalid parameter "query": 1:40: parse error: unexpected character: '$'`; err == nil || err.Error() != want {
		t.Errorf("err %v, want %s", err, want)
	}
}

func TestPanelBox(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		g                        gridPos
		left, top, width, height int
	}{
		{gridPos{H: 8, W: 12, X: 0, Y: 0}, 16, headerH, 780, 296},
		{gridPos{H: 8, W: 12, X: 12, Y: 8}, 804, headerH + 304, 780, 296},
		{gridPos{H: 1, W: 24, X: 0, Y: 16}, 16, headerH + 608, 1568, 30},
		{gridPos{H: 4, W: 6, X: 18, Y: 0}, 1198, headerH, 386, 144},
	} {
		l, tp, w, h := panelBox(tc.g, 1600)
		if l != tc.left || tp != tc.top || w != tc.width || h != tc.height {
			t.Errorf("%+v: %d,%d %d×%d, want %d,%d %d×%d", tc.g, l, tp, w, h, tc.left, tc.top, tc.width, tc.height)
		}
	}
}

func TestLegendRows(t *testing.T) {
	t.Parallel()
	item := legendItem{Name: "127.0.0.1:6443 success"} // 22 runes: 36 + 154 = 190 px
	for _, tc := range []struct{ n, w, want int }{{0, 500, 0}, {1, 100, 1}, {2, 380, 1}, {3, 380, 2}, {6, 764, 2}} {
		items := make([]legendItem, tc.n)
		for i := range items {
			items[i] = item
		}
		if got := legendRows(items, tc.w); got != tc.want {
			t.Errorf("%d entries in %d px: %d rows, want %d", tc.n, tc.w, got, tc.want)
		}
	}
}

// TestBuildPageKinds: a row is a title, an unknown panel type says so, a stat shows last values.
func TestBuildPageKinds(t *testing.T) {
	t.Parallel()
	th, _ := themeNamed("light")
	s := series{Samples: []sample{{T: fixtureStart, V: 0.5}, {T: fixtureStart.Add(time.Minute), V: 0.25}}}
	stat := panel{Type: "stat", Title: "S", GridPos: gridPos{H: 4, W: 6}}
	stat.FieldConfig.Defaults.Unit = "percentunit"
	v := buildPage(pageInput{Title: "T", Start: fixtureStart, End: fixtureStart.Add(time.Hour), Step: time.Minute, Width: 1600, Theme: th,
		Panels: []panelResult{
			{Panel: panel{Type: "row", Title: "R", GridPos: gridPos{H: 1, W: 24}}},
			{Panel: panel{Type: "table", Title: "Tb", GridPos: gridPos{H: 8, W: 12, Y: 1}}, Series: []namedSeries{{Name: "x", series: s}}},
			{Panel: stat, Series: []namedSeries{{Name: "a", series: s}, {Name: "empty"}}},
			{Panel: panel{Type: "timeseries", Title: "Empty", GridPos: gridPos{H: 8, W: 12, X: 12, Y: 1}}, Series: []namedSeries{{Name: "e"}}},
		}})
	if !v.Panels[0].Row || v.Panels[0].Height != cellHeight {
		t.Errorf("row: %+v", v.Panels[0])
	}
	if want := `panel type "table" is not drawn by dashshot`; v.Panels[1].Message != want {
		t.Errorf("table: %q", v.Panels[1].Message)
	}
	if want := []statView{{Color: palette[0], Name: "a", Value: "25%"}}; len(v.Panels[2].Stats) != 1 || v.Panels[2].Stats[0] != want[0] {
		t.Errorf("stat: %+v", v.Panels[2].Stats)
	}
	if v.Panels[3].Message != "No data" || v.Panels[3].Plot != nil {
		t.Errorf("empty: %+v", v.Panels[3])
	}
	if want := headerH + 9*(cellHeight+cellMargin) - cellMargin + pagePadding; v.Height != want {
		t.Errorf("page height %d, want %d", v.Height, want)
	}
	if _, err := renderHTML(v); err != nil {
		t.Fatal(err)
	}
}
