// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"reflect"
	"testing"
	"time"
)

// testDashboard has the credential dashboard's three variables.
func testDashboard() *dashboard {
	d := &dashboard{}
	d.Templating.List = []variable{
		{Name: "datasource", Type: "datasource", Current: []byte(`{"selected":false,"text":"default","value":"default"}`)},
		{Name: "cluster", Label: "Cluster", Type: "query", IncludeAll: true},
		{Name: "instance", Label: "Member", Type: "query", IncludeAll: true, Multi: true},
		{Name: "job", Type: "custom", Current: []byte(`{"value":["apiserver","other"]}`)},
	}
	return d
}

func TestBindVariables(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                 string
		given                map[string][]string
		wantValues, wantShow map[string]string
		wantErr              string
	}{
		{name: "defaults", given: nil,
			wantValues: map[string]string{"datasource": "default", "cluster": ".*", "instance": ".*", "job": "apiserver"},
			wantShow:   map[string]string{"datasource": "default", "cluster": "All", "instance": "All", "job": "apiserver"}},
		{name: "one value of an All variable is regex-escaped",
			given:      map[string][]string{"cluster": {"lab"}, "instance": {"127.0.0.1:6443"}},
			wantValues: map[string]string{"datasource": "default", "cluster": "lab", "instance": `127\\.0\\.0\\.1:6443`, "job": "apiserver"},
			wantShow:   map[string]string{"datasource": "default", "cluster": "lab", "instance": "127.0.0.1:6443", "job": "apiserver"}},
		{name: "several values of a multi variable",
			given:      map[string][]string{"instance": {"a|b", "c"}},
			wantValues: map[string]string{"datasource": "default", "cluster": ".*", "instance": `(a\\|b|c)`, "job": "apiserver"},
			wantShow:   map[string]string{"datasource": "default", "cluster": "All", "instance": "a|b + c", "job": "apiserver"}},
		{name: "a single-value variable is escaped for a string",
			given:      map[string][]string{"job": {`it's`}},
			wantValues: map[string]string{"datasource": "default", "cluster": ".*", "instance": ".*", "job": `it\'s`},
			wantShow:   map[string]string{"datasource": "default", "cluster": "All", "instance": "All", "job": "it's"}},
		{name: "unknown variable", given: map[string][]string{"clustr": {"x"}, "zone": {"y"}},
			wantErr: "--var clustr, zone: the dashboard has no such variable"},
		{name: "two values for a single-value variable", given: map[string][]string{"job": {"a", "b"}},
			wantErr: "--var job given 2 times, but the variable takes one value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := bindVariables(testDashboard(), tc.given)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(b.values, tc.wantValues) {
				t.Errorf("values %v, want %v", b.values, tc.wantValues)
			}
			if !reflect.DeepEqual(b.display, tc.wantShow) {
				t.Errorf("display %v, want %v", b.display, tc.wantShow)
			}
		})
	}
}

func TestInterpolate(t *testing.T) {
	t.Parallel()
	b := bindings{values: map[string]string{"cluster": "lab", "instance": ".*", "c": "short"}}
	start := time.Date(2026, 12, 7, 17, 0, 0, 0, time.UTC)
	b = b.withIntervals(start, start.Add(time.Hour), 30*time.Second, 15*time.Second)
	for _, tc := range []struct{ in, want, wantErr string }{
		{in: `m{cluster=~"$cluster", instance=~"$instance"}`, want: `m{cluster=~"lab", instance=~".*"}`},
		{in: `m{cluster=~"${cluster}"}`, want: `m{cluster=~"lab"}`},
		{in: `m{cluster=~"${cluster:regex}"}`, want: `m{cluster=~"lab"}`},
		{in: `m{cluster=~"[[cluster]]", x="[[c:csv]]"}`, want: `m{cluster=~"lab", x="short"}`},
		{in: `$c$cluster`, want: `shortlab`},
		{in: `rate(x[$__rate_interval]) / rate(x[$__interval]) * $__range_s`, want: `rate(x[60s]) / rate(x[30s]) * 3600`},
		{in: `x[$__range] offset ${__interval_ms}ms`, want: `x[3600s] offset 30000ms`},
		{in: `m{cluster=~"$clusterX"} + $zone + $zone`, wantErr: "variable $clusterX, $zone has no value (give --var NAME=VALUE)"},
		{in: `no variables`, want: `no variables`},
		{in: `label_replace(m{cluster="$cluster"}, "host", "$1", "instance", "(.*):.*") or label_replace(m, "h", "${1}", "i", "(.*)")`,
			want: `label_replace(m{cluster="lab"}, "host", "$1", "instance", "(.*):.*") or label_replace(m, "h", "${1}", "i", "(.*)")`},
	} {
		got, err := b.interpolate(tc.in)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%s: err %v, want %s", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v, want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestRateInterval(t *testing.T) {
	t.Parallel()
	start := time.Unix(0, 0)
	for _, tc := range []struct {
		step, scrape time.Duration
		want         string
	}{
		{time.Second, 15 * time.Second, "60s"},
		{2 * time.Minute, 15 * time.Second, "135s"},
		{500 * time.Millisecond, time.Second, "4s"},
		{1500 * time.Millisecond, 250 * time.Millisecond, "1750ms"},
	} {
		b := bindings{values: map[string]string{}}.withIntervals(start, start.Add(time.Hour), tc.step, tc.scrape)
		if got := b.values["__rate_interval"]; got != tc.want {
			t.Errorf("step %s scrape %s: $__rate_interval %s, want %s", tc.step, tc.scrape, got, tc.want)
		}
	}
}

func TestLegend(t *testing.T) {
	t.Parallel()
	labels := map[string]string{"__name__": "up", "instance": "127.0.0.1:6443", "job": "apiserver", "q": `a"b`}
	for _, tc := range []struct {
		format string
		labels map[string]string
		want   string
	}{
		{"{{instance}}", labels, "127.0.0.1:6443"},
		{"{{ instance }} / {{job}}", labels, "127.0.0.1:6443 / apiserver"},
		{"{{instance}} {{__name__}}", labels, "127.0.0.1:6443 up"},
		{"{{instance}} {{result}}", labels, "127.0.0.1:6443 result"}, // Grafana writes a missing label's name
		{"fixed", labels, "fixed"},
		{"", labels, `up{instance="127.0.0.1:6443", job="apiserver", q="a\"b"}`},
		{"__auto", map[string]string{"instance": "x"}, `{instance="x"}`},
		{"", map[string]string{"__name__": "up"}, `up{}`},
	} {
		if got := legend(tc.format, tc.labels); got != tc.want {
			t.Errorf("legend(%q) = %q, want %q", tc.format, got, tc.want)
		}
	}
}

func TestRegexEscape(t *testing.T) {
	t.Parallel()
	if got, want := regexEscape(`a.b\c(d)|e*`), `a\\.b\\\\c\\(d\\)\\|e\\*`; got != want {
		t.Errorf("regexEscape = %s, want %s", got, want)
	}
}
