// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The part of Grafana's dashboard model (schemaVersion 39) that the page draws.
type (
	dashboard struct {
		Title      string `json:"title"`
		Templating struct {
			List []variable `json:"list"`
		} `json:"templating"`
		Panels []panel `json:"panels"`
	}
	variable struct {
		Name       string          `json:"name"`
		Label      string          `json:"label"`
		Type       string          `json:"type"`
		IncludeAll bool            `json:"includeAll"`
		Multi      bool            `json:"multi"`
		AllValue   string          `json:"allValue"`
		Hide       int             `json:"hide"`
		Current    json.RawMessage `json:"current"`
	}
	panel struct {
		ID          int     `json:"id"`
		Type        string  `json:"type"`
		Title       string  `json:"title"`
		GridPos     gridPos `json:"gridPos"`
		FieldConfig struct {
			Defaults struct {
				Unit     string   `json:"unit"`
				Decimals *int     `json:"decimals"`
				Min      *float64 `json:"min"`
				Max      *float64 `json:"max"`
			} `json:"defaults"`
		} `json:"fieldConfig"`
		Targets []target `json:"targets"`
		Panels  []panel  `json:"panels"` // a collapsed row's panels, not drawn
	}
	gridPos struct {
		H int `json:"h"`
		W int `json:"w"`
		X int `json:"x"`
		Y int `json:"y"`
	}
	target struct {
		RefID        string `json:"refId"`
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
		Hide         bool   `json:"hide"`
	}
)

// loadDashboard reads a dashboard JSON file.
func loadDashboard(path string) (*dashboard, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read dashboard: %w", err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("parse dashboard %s: %w", path, err)
	}
	if len(d.Panels) == 0 {
		return nil, fmt.Errorf("dashboard %s has no panels", path)
	}
	return &d, nil
}

// allValue is what a variable with "All" selected and no allValue of its own stands for: every
// value of a label, as a regular expression.
const allValue = ".*"

// bindings are the values of a dashboard's variables, formatted as Grafana's Prometheus data source
// formats them into a query, plus Grafana's built-in interval variables.
type bindings struct {
	values  map[string]string // name → text put into queries
	display map[string]string // name → text shown in the page's variable bar
}

// bindVariables gives each of the dashboard's variables a value: the --var values given for it
// (several for a multi-value variable), else All (".*" or its allValue) when it allows All, else
// its saved current value. Values of a variable that includes All or is multi-value are
// regex-escaped, since Grafana writes them into =~ matchers; several values become (a|b). A --var
// for a variable the dashboard lacks is an error.
func bindVariables(d *dashboard, given map[string][]string) (bindings, error) {
	b := bindings{values: map[string]string{}, display: map[string]string{}}
	known := map[string]bool{}
	for _, v := range d.Templating.List {
		known[v.Name] = true
		vals, ok := given[v.Name]
		switch {
		case ok && (v.Multi || v.IncludeAll):
			esc := make([]string, len(vals))
			for i, s := range vals {
				esc[i] = regexEscape(s)
			}
			b.values[v.Name] = esc[0]
			if len(esc) > 1 {
				b.values[v.Name] = "(" + strings.Join(esc, "|") + ")"
			}
			b.display[v.Name] = strings.Join(vals, " + ")
		case ok:
			if len(vals) > 1 {
				return bindings{}, fmt.Errorf("--var %s given %d times, but the variable takes one value", v.Name, len(vals))
			}
			b.values[v.Name] = promStringEscape(vals[0])
			b.display[v.Name] = vals[0]
		case v.IncludeAll:
			b.values[v.Name] = allValue
			if v.AllValue != "" {
				b.values[v.Name] = v.AllValue
			}
			b.display[v.Name] = "All"
		default:
			if cur := currentValue(v.Current); cur != "" {
				b.values[v.Name] = cur
				b.display[v.Name] = cur
			}
		}
	}
	var unknown []string
	for name := range given {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return bindings{}, fmt.Errorf("--var %s: the dashboard has no such variable", strings.Join(unknown, ", "))
	}
	return b, nil
}

// currentValue is a variable's saved current value ("current": {"value": ...}), a string or the
// first of a list.
func currentValue(raw json.RawMessage) string {
	var cur struct {
		Value any `json:"value"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &cur) != nil {
		return ""
	}
	switch v := cur.Value.(type) {
	case string:
		return v
	case []any:
		if len(v) > 0 {
			s, _ := v[0].(string)
			return s
		}
	}
	return ""
}

// regexEscape escapes a value's regular-expression metacharacters for use inside a PromQL
// double-quoted string, as Grafana's Prometheus data source does (prometheusSpecialRegexEscape):
// "10.0.0.1:6443" becomes `10\\.0\\.0\\.1:6443`.
func regexEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\\\`)
		case strings.ContainsRune(`$^*+?.()|[]{}`, r):
			b.WriteString(`\\`)
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// promStringEscape escapes a single value for a PromQL string (prometheusRegularEscape).
func promStringEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
}

// withIntervals adds Grafana's built-in interval variables for a query over [start, end] at
// step: $__interval (the step), $__rate_interval (max(step + scrape, 4 × scrape), as Grafana
// computes it from the data source's scrape interval) and $__range.
func (b bindings) withIntervals(start, end time.Time, step, scrape time.Duration) bindings {
	v := make(map[string]string, len(b.values)+8)
	for k, s := range b.values {
		v[k] = s
	}
	rng := end.Sub(start)
	v["__interval"] = promDuration(step)
	v["__interval_ms"] = strconv.FormatInt(step.Milliseconds(), 10)
	v["__rate_interval"] = promDuration(max(step+scrape, 4*scrape))
	v["__range"] = promDuration(rng)
	v["__range_s"] = strconv.FormatInt(int64(rng.Seconds()), 10)
	v["__range_ms"] = strconv.FormatInt(rng.Milliseconds(), 10)
	return bindings{values: v, display: b.display}
}

// promDuration writes d as a PromQL duration: whole milliseconds, else whole seconds.
func promDuration(d time.Duration) string {
	if d%time.Second != 0 {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return strconv.FormatInt(int64(d/time.Second), 10) + "s"
}

// varRef is Grafana's variable syntax (public/app/features/variables/utils.ts variableRegex):
// $name, [[name]] or [[name:format]], ${name}, ${name.field} or ${name:format}.
var varRef = regexp.MustCompile(`\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?:\.([^:^}]+))?(?::([^}]+))?\}`)

// interpolate replaces the variables in expr by their values. A reference to a variable without a
// value is an error naming it: Prometheus would only say that the query does not parse. $1 and
// ${1} without such a variable are left for PromQL: label_replace's references to its regex's
// groups, which Grafana leaves alone too.
func (b bindings) interpolate(expr string) (string, error) {
	var missing []string
	out := varRef.ReplaceAllStringFunc(expr, func(ref string) string {
		m := varRef.FindStringSubmatch(ref)
		name := m[1] + m[2] + m[4] // one of them is set
		v, ok := b.values[name]
		if !ok && strings.Trim(name, "0123456789") == "" {
			return ref
		}
		if !ok {
			missing = append(missing, "$"+name)
			return ref
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("variable %s has no value (give --var NAME=VALUE)", strings.Join(slices.Compact(missing), ", "))
	}
	return out, nil
}

// legendRef is a {{label}} reference in a legendFormat.
var legendRef = regexp.MustCompile(`\{\{\s*(.+?)\s*\}\}`)

// legend names a series as Grafana's Prometheus data source does (renderLegendFormat,
// getOriginalMetricName): its legendFormat with each {{label}} replaced by the label's value (by
// the label's name if the series lacks it), or with no legendFormat (or "__auto") the series' name
// and labels, metric{a="1", b="2"}.
func legend(format string, labels map[string]string) string {
	if format != "" && format != "__auto" {
		return legendRef.ReplaceAllStringFunc(format, func(ref string) string {
			name := legendRef.FindStringSubmatch(ref)[1]
			if v := labels[name]; v != "" {
				return v
			}
			return name
		})
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		if k != "__name__" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, labels[k])
	}
	return labels["__name__"] + "{" + strings.Join(parts, ", ") + "}"
}
