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
	f.Add(signerSample)
	f.Add(authnSample)
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
	byLabel := func(name, label string, vals map[string]float64) *dto.MetricFamily {
		f := &dto.MetricFamily{Name: proto.String(name), Type: dto.MetricType_COUNTER.Enum()}
		for _, v := range slices.Sorted(maps.Keys(vals)) {
			one := counter("", vals[v], &dto.LabelPair{Name: proto.String(label), Value: proto.String(v)})
			f.Metric = append(f.Metric, one.Metric...)
		}
		return f
	}
	if m.AuthAttempts != nil {
		fams = append(fams, byLabel("authentication_attempts", "result", m.AuthAttempts))
	}
	if s := m.Signer; s != nil {
		gauge := func(name string, v float64) *dto.MetricFamily {
			return &dto.MetricFamily{Name: proto.String(name), Type: dto.MetricType_GAUGE.Enum(),
				Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: proto.Float64(v)}}}}
		}
		fams = append(fams, gauge(metricFetchKeysSuccess, s.FetchKeysSuccess), gauge(metricFetchKeysData, s.DataTimestamp))
		if s.FetchKeys != nil {
			fams = append(fams, byLabel(metricFetchKeysTotal, "code", s.FetchKeys))
		}
		if s.Sign != nil {
			fams = append(fams, byLabel(metricSignTotal, "code", s.Sign))
		}
	}
	if a := m.Authn; a != nil {
		fams = append(fams, authnFamilies(a)...)
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
	sameMap := func(x, y map[string]float64) bool {
		if (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !same(v, w) {
				return false
			}
		}
		return true
	}
	if !sameMap(a.AuthAttempts, b.AuthAttempts) || (a.Signer == nil) != (b.Signer == nil) {
		return false
	}
	if s, t := a.Signer, b.Signer; s != nil && !(same(s.FetchKeysSuccess, t.FetchKeysSuccess) && same(s.DataTimestamp, t.DataTimestamp) &&
		sameMap(s.FetchKeys, t.FetchKeys) && sameMap(s.Sign, t.Sign)) {
		return false
	}
	if (a.Authn == nil) != (b.Authn == nil) {
		return false
	}
	if x, y := a.Authn, b.Authn; x != nil {
		if x.APIServerIDHash != y.APIServerIDHash || x.ConfigHash != y.ConfigHash || !sameMap(x.Reloads, y.Reloads) ||
			!sameMap(x.LastReload, y.LastReload) || len(x.Issuers) != len(y.Issuers) {
			return false
		}
		for h, j := range x.Issuers {
			k, ok := y.Issuers[h]
			if !ok || j.KeySetHash != k.KeySetHash || !same(j.LastSuccess, k.LastSuccess) || !same(j.LastFailure, k.LastFailure) {
				return false
			}
		}
	}
	return true
}

// authnFamilies writes a member's structured authentication figures as kube-apiserver exports
// them, every sample labelled with its apiserver_id_hash.
func authnFamilies(a *AuthnMetrics) []*dto.MetricFamily {
	lp := func(kv ...string) []*dto.LabelPair {
		out := []*dto.LabelPair{{Name: proto.String("apiserver_id_hash"), Value: proto.String(a.APIServerIDHash)}}
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, &dto.LabelPair{Name: proto.String(kv[i]), Value: proto.String(kv[i+1])})
		}
		return out
	}
	gauges := func(name string) *dto.MetricFamily {
		return &dto.MetricFamily{Name: proto.String(name), Type: dto.MetricType_GAUGE.Enum()}
	}
	add := func(f *dto.MetricFamily, v float64, labels []*dto.LabelPair) {
		f.Metric = append(f.Metric, &dto.Metric{Label: labels, Gauge: &dto.Gauge{Value: proto.Float64(v)}})
	}
	info, reloads, last, keySet, fetched := gauges(metricAuthnConfigInfo), &dto.MetricFamily{Name: proto.String(metricAuthnReloads), Type: dto.MetricType_COUNTER.Enum()},
		gauges(metricAuthnReloadLast), gauges(metricJWKSKeySet), gauges(metricJWKSFetchLast)
	add(info, 1, lp("hash", a.ConfigHash))
	for _, st := range slices.Sorted(maps.Keys(a.Reloads)) {
		reloads.Metric = append(reloads.Metric, &dto.Metric{Label: lp("status", st), Counter: &dto.Counter{Value: proto.Float64(a.Reloads[st])}})
	}
	for _, st := range slices.Sorted(maps.Keys(a.LastReload)) {
		add(last, a.LastReload[st], lp("status", st))
	}
	for _, h := range slices.Sorted(maps.Keys(a.Issuers)) {
		j := a.Issuers[h]
		add(keySet, 1, lp("jwt_issuer_hash", h, "hash", j.KeySetHash))
		if j.LastSuccess != 0 {
			add(fetched, j.LastSuccess, lp("jwt_issuer_hash", h, "result", "success"))
		}
		if j.LastFailure != 0 {
			add(fetched, j.LastFailure, lp("jwt_issuer_hash", h, "result", "failure"))
		}
	}
	var out []*dto.MetricFamily
	for _, f := range []*dto.MetricFamily{info, reloads, last, keySet, fetched} {
		if len(f.Metric) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// signerSample is what a v1.36.3 member with an external signer exports (taken from a lab member
// whose signer's FetchKeys had started failing; histogram lines left out).
const signerSample = `# HELP apiserver_externaljwt_fetch_keys_data_timestamp [ALPHA] Unix Timestamp in seconds of the last successful FetchKeys data_timestamp value returned by the external signer
# TYPE apiserver_externaljwt_fetch_keys_data_timestamp gauge
apiserver_externaljwt_fetch_keys_data_timestamp 1.7966128195036025e+09
# HELP apiserver_externaljwt_fetch_keys_request_total [ALPHA] Total attempts at syncing supported JWKs
# TYPE apiserver_externaljwt_fetch_keys_request_total counter
apiserver_externaljwt_fetch_keys_request_total{code="OK"} 1
apiserver_externaljwt_fetch_keys_request_total{code="Unavailable"} 3
# HELP apiserver_externaljwt_fetch_keys_success_timestamp [ALPHA] Unix Timestamp in seconds of the last successful FetchKeys request
# TYPE apiserver_externaljwt_fetch_keys_success_timestamp gauge
apiserver_externaljwt_fetch_keys_success_timestamp 1.7966128197045207e+09
# HELP apiserver_externaljwt_sign_request_total [ALPHA] Total attempts at signing JWT
# TYPE apiserver_externaljwt_sign_request_total counter
apiserver_externaljwt_sign_request_total{code="OK"} 12
`

func TestParseSignerMetrics(t *testing.T) {
	m, err := ParseMetrics(strings.NewReader(signerSample))
	if err != nil {
		t.Fatal(err)
	}
	s := m.Signer
	if s == nil || s.FetchKeys["OK"] != 1 || s.FetchKeys["Unavailable"] != 3 || s.FetchKeysFailed() != 3 || s.Sign["OK"] != 12 ||
		s.FetchKeysSuccess != 1.7966128197045207e+09 || s.DataTimestamp != 1.7966128195036025e+09 {
		t.Errorf("signer metrics %+v", s)
	}
	// Registered but never set (a member without a signer): HELP and TYPE, no sample.
	none, err := ParseMetrics(strings.NewReader("# HELP apiserver_externaljwt_fetch_keys_success_timestamp x\n# TYPE apiserver_externaljwt_fetch_keys_success_timestamp gauge\n"))
	if err != nil || none.Signer != nil {
		t.Errorf("no samples: %+v, %v; want no signer", none.Signer, err)
	}
}

func TestMaxAge(t *testing.T) {
	for cc, want := range map[string]int{"public, max-age=0": 0, "public, max-age=3600": 3600, "max-age=12, public": 12, "": -1, "public": -1, "max-age=x": -1} {
		got := maxAge(cc)
		if (got == nil) != (want < 0) || got != nil && *got != want {
			t.Errorf("maxAge(%q) = %v, want %d", cc, got, want)
		}
	}
}

// authnSample is what a v1.36.3 member with an AuthenticationConfiguration exports after one
// failed reload and a verified ID token (the hashes shortened).
const authnSample = `# HELP apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds [BETA] Timestamp of the last automatic reload of authentication configuration split by status and apiserver identity.
# TYPE apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds gauge
apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds{apiserver_id_hash="sha256:aa11",status="failure"} 1.796613e+09
apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds{apiserver_id_hash="sha256:aa11",status="success"} 1.7966125e+09
# HELP apiserver_authentication_config_controller_automatic_reloads_total [BETA] Total number of automatic reloads of authentication configuration split by status and apiserver identity.
# TYPE apiserver_authentication_config_controller_automatic_reloads_total counter
apiserver_authentication_config_controller_automatic_reloads_total{apiserver_id_hash="sha256:aa11",status="failure"} 1
apiserver_authentication_config_controller_automatic_reloads_total{apiserver_id_hash="sha256:aa11",status="success"} 2
# HELP apiserver_authentication_config_controller_last_config_info [ALPHA] Information about the last applied authentication configuration with hash as label, split by apiserver identity.
# TYPE apiserver_authentication_config_controller_last_config_info gauge
apiserver_authentication_config_controller_last_config_info{apiserver_id_hash="sha256:aa11",hash="sha256:cc33"} 1
# HELP apiserver_authentication_jwt_authenticator_jwks_fetch_last_key_set_info [ALPHA] Information about the last JWKS fetched by the JWT authenticator with hash as label, split by api server identity and jwt issuer.
# TYPE apiserver_authentication_jwt_authenticator_jwks_fetch_last_key_set_info gauge
apiserver_authentication_jwt_authenticator_jwks_fetch_last_key_set_info{apiserver_id_hash="sha256:aa11",hash="sha256:ee55",jwt_issuer_hash="sha256:dd44"} 1
# HELP apiserver_authentication_jwt_authenticator_jwks_fetch_last_timestamp_seconds [ALPHA] Timestamp of the last successful or failed JWKS fetch split by result, api server identity and jwt issuer for the JWT authenticator.
# TYPE apiserver_authentication_jwt_authenticator_jwks_fetch_last_timestamp_seconds gauge
apiserver_authentication_jwt_authenticator_jwks_fetch_last_timestamp_seconds{apiserver_id_hash="sha256:aa11",jwt_issuer_hash="sha256:dd44",result="success"} 1.7966126e+09
`

func TestParseAuthnMetrics(t *testing.T) {
	m, err := ParseMetrics(strings.NewReader(authnSample))
	if err != nil {
		t.Fatal(err)
	}
	a := m.Authn
	if a == nil || a.APIServerIDHash != "sha256:aa11" || a.ConfigHash != "sha256:cc33" || a.Reloads["failure"] != 1 || a.Reloads["success"] != 2 ||
		a.LastReload["failure"] != 1.796613e+09 || a.LastReload["success"] != 1.7966125e+09 {
		t.Fatalf("authn metrics %+v", a)
	}
	if j := a.Issuers["sha256:dd44"]; j.KeySetHash != "sha256:ee55" || j.LastSuccess != 1.7966126e+09 || j.LastFailure != 0 || len(a.Issuers) != 1 {
		t.Errorf("issuers %+v", a.Issuers)
	}
	if none, err := ParseMetrics(strings.NewReader(signerSample)); err != nil || none.Authn != nil {
		t.Errorf("a member without an AuthenticationConfiguration: %+v, %v", none.Authn, err)
	}
}
