// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
)

const sampleMetrics = `# HELP authentication_attempts [ALPHA] Counter of authenticated attempts.
# TYPE authentication_attempts counter
authentication_attempts{result="error"} 3
authentication_attempts{result="failure"} 2
authentication_attempts{result="success"} 290
# HELP serviceaccount_legacy_tokens_total [ALPHA] Cumulative legacy service account tokens used
# TYPE serviceaccount_legacy_tokens_total counter
serviceaccount_legacy_tokens_total 4
# HELP serviceaccount_stale_tokens_total [ALPHA] Cumulative stale projected service account tokens used
# TYPE serviceaccount_stale_tokens_total counter
serviceaccount_stale_tokens_total 7
# TYPE serviceaccount_valid_tokens_total counter
serviceaccount_valid_tokens_total 11
`

func TestParseMetrics(t *testing.T) {
	m, err := ParseMetrics(strings.NewReader(sampleMetrics))
	if err != nil {
		t.Fatal(err)
	}
	if m.StaleTokens != 7 || m.LegacyTokens != 4 || m.ValidTokens != 11 {
		t.Errorf("got %+v", m)
	}
	if m.AuthAttempts["success"] != 290 || m.AuthAttempts["failure"] != 2 || m.AuthAttempts["error"] != 3 {
		t.Errorf("auth attempts %+v", m.AuthAttempts)
	}
	if _, err := ParseMetrics(strings.NewReader("not{ metrics")); err == nil {
		t.Error("garbage parsed")
	}
	empty, err := ParseMetrics(strings.NewReader(""))
	if err != nil || empty.StaleTokens != 0 || empty.AuthAttempts != nil {
		t.Errorf("empty: %+v %v", empty, err)
	}
}

// FuzzParseMetrics: the figures ParseMetrics reads survive a round trip through the exposition
// format (written by the Prometheus library's own encoder, then parsed again).
func FuzzParseMetrics(f *testing.F) {
	f.Add(sampleMetrics)
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		m, err := ParseMetrics(strings.NewReader(text))
		if err != nil {
			return
		}
		again, err := ParseMetrics(strings.NewReader(exposition(t, m)))
		if err != nil {
			t.Fatalf("parse the written figures: %v\n%s", err, exposition(t, m))
		}
		if !sameMetrics(m, again) {
			t.Fatalf("figures changed in a round trip: %+v, then %+v", m, again)
		}
	})
}

// exposition writes m as the kube-apiserver families it was read from.
func exposition(t *testing.T, m *Metrics) string {
	t.Helper()
	counter := func(name string, v float64, labels ...*dto.LabelPair) *dto.MetricFamily {
		return &dto.MetricFamily{Name: proto.String(name), Type: dto.MetricType_COUNTER.Enum(),
			Metric: []*dto.Metric{{Label: labels, Counter: &dto.Counter{Value: proto.Float64(v)}}}}
	}
	fams := []*dto.MetricFamily{
		counter("serviceaccount_stale_tokens_total", m.StaleTokens),
		counter("serviceaccount_legacy_tokens_total", m.LegacyTokens),
		counter("serviceaccount_valid_tokens_total", m.ValidTokens),
		counter("serviceaccount_invalid_legacy_auto_token_uses_total", m.InvalidLegacy),
	}
	if m.AuthAttempts != nil {
		attempts := &dto.MetricFamily{Name: proto.String("authentication_attempts"), Type: dto.MetricType_COUNTER.Enum()}
		for _, result := range slices.Sorted(maps.Keys(m.AuthAttempts)) {
			one := counter("", m.AuthAttempts[result], &dto.LabelPair{Name: proto.String("result"), Value: proto.String(result)})
			attempts.Metric = append(attempts.Metric, one.Metric...)
		}
		fams = append(fams, attempts)
	}
	var b strings.Builder
	for _, f := range fams {
		if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
			t.Fatalf("write %s: %v", f.GetName(), err)
		}
	}
	return b.String()
}

func sameMetrics(a, b *Metrics) bool {
	same := func(x, y float64) bool { return x == y || (math.IsNaN(x) && math.IsNaN(y)) }
	if !same(a.StaleTokens, b.StaleTokens) || !same(a.LegacyTokens, b.LegacyTokens) ||
		!same(a.ValidTokens, b.ValidTokens) || !same(a.InvalidLegacy, b.InvalidLegacy) ||
		(a.AuthAttempts == nil) != (b.AuthAttempts == nil) || len(a.AuthAttempts) != len(b.AuthAttempts) {
		return false
	}
	for k, v := range a.AuthAttempts {
		if w, ok := b.AuthAttempts[k]; !ok || !same(v, w) {
			return false
		}
	}
	return true
}
