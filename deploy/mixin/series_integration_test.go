// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package mixin_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/credwatch/credwatch/deploy/mixin"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// TestIntegrationSeriesExist: every series a mixin rule reads is one that the lab's real
// kube-apiserver of each line exports, with the labels the rule reads; where a line's members do
// not (a series newer than the line), the series' Since says so, and the test lists which lines
// lack which series instead of failing.
//
// A vector kube-apiserver has registered but never set prints nothing at all on /metrics, not even
// its HELP and TYPE lines (component-base uses client_golang's registry, which gathers only
// children). So the test first makes the series appear: bearer tokens valid and invalid (the
// authentication counters and the token cache), and a second member with an
// --authentication-config naming a JWT issuer nobody serves (the structured-authentication
// controller and the JWT authenticator). For a series still absent, it tells "registered, never
// set" from "unknown to this line" by the series' help text in the line's kube-apiserver binary:
// the help text, not the name, because component-base builds the name from separate namespace,
// subsystem and name strings. Such a series is reported, not failed; its labels are then checked
// only by the source the Series names. The external signer's series need a member with a signer
// (lab.Options.ExternalSigner), whose binary the lab cache may lack: then they are checked so.
func TestIntegrationSeriesExist(t *testing.T) {
	lacking := map[string][]string{}
	for _, version := range []string{lab.OldVersion, lab.DefaultVersion} {
		t.Run(version, func(t *testing.T) {
			l := labtest.Start(t, lab.Options{Members: 1, Version: version})
			first := l.Members()[0].Name
			if _, err := l.AddMember(context.Background(), lab.MemberOptions{ExtraArgs: []string{"--authentication-config=" + authnConfig(t)}}); err != nil {
				t.Fatalf("add a member with an authentication configuration: %v", err)
			}
			token := mintToken(t, l, first)
			c := client(l)
			for _, m := range l.Members() {
				for _, tok := range []string{token, token, "not-a-token", token[:len(token)-4] + "AAAA"} {
					present(c, l, m.Name, tok)
				}
			}
			fams := map[string]*dto.MetricFamily{}
			for _, m := range l.Members() {
				for name, f := range scrape(t, l, m.Name) {
					if g, ok := fams[name]; ok {
						g.Metric = append(g.Metric, f.GetMetric()...)
					} else {
						fams[name] = f
					}
				}
			}
			bin, err := os.ReadFile(filepath.Join(lab.DefaultBinDir(), version, "kube-apiserver"))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range mixin.AllSeries() {
				lines := checkSeries(t, version, s, fams, bin)
				if lines != "" {
					lacking[version] = append(lacking[version], lines)
				}
			}
		})
	}
	for _, v := range slices.Sorted(func(yield func(string) bool) {
		for v := range lacking {
			if !yield(v) {
				return
			}
		}
	}) {
		t.Logf("%s lacks (expected: newer than the line): %s", v, strings.Join(lacking[v], ", "))
	}
}

// checkSeries checks one series on one line; it returns the series' name when the line lacks it
// as its Since expects.
func checkSeries(t *testing.T, version string, s mixin.Series, fams map[string]*dto.MetricFamily, bin []byte) string {
	t.Helper()
	want := !mixin.MinorLess(version, s.Since)
	registered := s.Help != "" && bytes.Contains(bin, []byte(s.Help))
	f, scraped := fams[s.Family()]
	switch {
	case scraped && !want:
		t.Errorf("%s exports %s, but its Since is %s: lower it", version, s.Family(), s.Since)
	case scraped:
		names := labelNames(f)
		for _, l := range s.Labels {
			if !names[l] {
				t.Errorf("%s: %s has no label %s (labels %v)", version, s.Family(), l, slices.Sorted(maps.Keys(names)))
			}
		}
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if vals, ok := s.Values[lp.GetName()]; ok && !slices.Contains(vals, lp.GetValue()) {
					t.Errorf("%s: %s{%s=%q}: a value the rules do not know (they know %v)", version, s.Family(), lp.GetName(), lp.GetValue(), vals)
				}
			}
		}
		if help := stripStability(f.GetHelp()); s.Help != "" && help != s.Help {
			t.Errorf("%s: %s help %q, the Series says %q", version, s.Family(), help, s.Help)
		}
		t.Logf("%s exports %s{%s}", version, s.Family(), strings.Join(slices.Sorted(maps.Keys(names)), ","))
	case want && registered:
		t.Logf("%s registers %s (its help text is in the binary) but has set no child: labels %v checked by %s only", version, s.Family(), s.Labels, s.Source)
	case want:
		t.Errorf("%s does not export %s (not scraped, help text %q not in its kube-apiserver): Since %s is wrong, or the name is", version, s.Family(), s.Help, s.Since)
	case registered:
		t.Errorf("%s registers %s (its help text is in the binary), but its Since is %s: lower it", version, s.Family(), s.Since)
	default:
		return fmt.Sprintf("%s (since %s)", s.Family(), s.Since)
	}
	return ""
}

func stripStability(help string) string {
	for _, p := range []string{"[ALPHA] ", "[BETA] ", "[STABLE] "} {
		if h, ok := strings.CutPrefix(help, p); ok {
			return h
		}
	}
	return help
}
