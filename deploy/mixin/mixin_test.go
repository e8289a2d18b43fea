// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package mixin_test

import (
	"flag"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/deploy/mixin"
	"github.com/credwatch/credwatch/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the mixin's rendered files")

// TestGolden: the committed mixin files are what the Go source renders.
func TestGolden(t *testing.T) {
	c := mixin.DefaultConfig()
	for _, f := range []struct {
		path   string
		render func(mixin.Config) ([]byte, error)
	}{
		{"alerts.yaml", mixin.AlertsYAML},
		{"rules.yaml", mixin.RulesYAML},
		{"prometheusrule.yaml", mixin.PrometheusRuleYAML},
		{"dashboards/credwatch-credentials.json", mixin.DashboardJSON},
		{"../helm/credwatch/files/mixin.yaml", mixin.RuleFileYAML},
	} {
		got, err := f.render(c)
		if err != nil {
			t.Fatalf("%s: %v", f.path, err)
		}
		golden.Check(t, f.path, got, *update)
	}
}

// TestRules: every alert has what an operator needs (a severity, a summary and a description
// that name the member, a runbook anchor), every rule declares the series it reads, and every
// series an expression names is declared.
func TestRules(t *testing.T) {
	groups, err := mixin.Groups(mixin.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]bool{}
	seen := map[string]bool{}
	for _, g := range groups {
		for _, r := range g.Rules {
			if seen[r.Name()] {
				t.Errorf("%s: defined twice", r.Name())
			}
			seen[r.Name()] = true
			if r.Record != "" {
				recorded[r.Record] = true
			}
			if len(r.Uses) == 0 {
				t.Errorf("%s: declares no series", r.Name())
			}
			for _, s := range r.Uses {
				if !strings.Contains(r.Expr, s.Name) && !usesRecorded(r.Expr, recorded) {
					t.Errorf("%s: declares %s but its expression names neither it nor a recorded series", r.Name(), s.Name)
				}
			}
			for _, name := range seriesNames(r.Expr) {
				if !recorded[name] && !declared(r.Uses, name) {
					t.Errorf("%s: names %s, which it does not declare", r.Name(), name)
				}
			}
			if r.Alert == "" {
				continue
			}
			switch r.Severity {
			case "info", "warning", "critical":
			default:
				t.Errorf("%s: severity %q", r.Alert, r.Severity)
			}
			if !strings.Contains(r.Summary, "{{ $labels.instance }}") || !strings.Contains(r.Description, "{{ $labels.instance }}") {
				t.Errorf("%s: summary or description does not name the member ({{ $labels.instance }})", r.Alert)
			}
			if r.Runbook == "" || r.Runbook != strings.ToLower(r.Runbook) {
				t.Errorf("%s: runbook anchor %q", r.Alert, r.Runbook)
			}
		}
	}
}

func usesRecorded(expr string, recorded map[string]bool) bool {
	for _, n := range seriesNames(expr) {
		if recorded[n] {
			return true
		}
	}
	return false
}

func declared(uses []mixin.Series, name string) bool {
	for _, s := range uses {
		if s.Name == name || strings.HasPrefix(name, s.Family()+"_") {
			return true
		}
	}
	return false
}

var (
	identifier = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	notSeries  = map[string]bool{"sum": true, "by": true, "rate": true, "increase": true, "on": true, "and": true, "or": true,
		"unless": true, "ignoring": true, "group_left": true, "group_right": true, "count": true, "time": true,
		"histogram_quantile": true, "le": true, "hash": true, "instance": true, "cluster": true, "jwt_issuer_hash": true,
		"result": true, "status": true, "code": true, "job": true}
)

// seriesNames are the metric names an expression names: identifiers that are no function,
// keyword or label, outside strings and braces. The promtool module checks the same with
// Prometheus' own parser; this keeps the main module free of it.
func seriesNames(expr string) []string {
	var b strings.Builder
	depth, quoted := 0, false
	for _, r := range expr {
		switch {
		case quoted:
			quoted = r != '"'
			r = ' '
		case r == '"':
			quoted = true
			r = ' '
		case r == '{':
			depth++
		case r == '}':
			depth--
			r = ' '
		case r == '[':
			depth++
		case r == ']':
			depth--
			r = ' '
		}
		if depth > 0 {
			r = ' '
		}
		b.WriteRune(r)
	}
	var out []string
	for _, id := range identifier.FindAllString(b.String(), -1) {
		if !notSeries[id] {
			out = append(out, id)
		}
	}
	return out
}

func TestConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(*mixin.Config)
		want string
	}{
		{"default", func(*mixin.Config) {}, ""},
		{"no selector", func(c *mixin.Config) { c.APIServerSelector = "" }, "empty APIServerSelector"},
		{"ratio", func(c *mixin.Config) { c.FailureRatio = 1.5 }, "between 0 and 1"},
		{"certificates", func(c *mixin.Config) { c.CertWarning = time.Hour }, "CertWarning above CertCritical"},
		{"runbook", func(c *mixin.Config) { c.RunbookURL = "docs/runbook.md" }, "not an http(s) URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := mixin.DefaultConfig()
			tt.edit(&c)
			err := c.Validate()
			if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
			if _, gerr := mixin.Groups(c); (gerr == nil) != (err == nil) {
				t.Errorf("Groups() = %v, Validate() = %v", gerr, err)
			}
		})
	}
}

func TestMinorLess(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{{"v1.30", "v1.34", true}, {"v1.36.3", "v1.34", false}, {"v1.30.14", "v1.30", false}, {"v1.9", "v1.10", true}} {
		if got := mixin.MinorLess(tt.a, tt.b); got != tt.want {
			t.Errorf("MinorLess(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
