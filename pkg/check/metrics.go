// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"io"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ParseMetrics reads the authentication figures from a kube-apiserver /metrics text exposition.
// Families that are absent stay zero.
func ParseMetrics(r io.Reader) (*Metrics, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics: %w", err)
	}
	m := &Metrics{
		StaleTokens:   sum(fams["serviceaccount_stale_tokens_total"]),
		LegacyTokens:  sum(fams["serviceaccount_legacy_tokens_total"]),
		ValidTokens:   sum(fams["serviceaccount_valid_tokens_total"]),
		InvalidLegacy: sum(fams["serviceaccount_invalid_legacy_auto_token_uses_total"]),
	}
	if f := fams["authentication_attempts"]; f != nil {
		m.AuthAttempts = byLabel(f, "result")
	}
	m.Signer = parseSigner(fams)
	m.Authn = parseAuthn(fams)
	return m, nil
}

// The structured authentication families at k8s.io/apiserver v0.36.3:
// pkg/server/options/authenticationconfig/metrics/metrics.go, lines 35-64 (registered only with
// --authentication-config), and plugin/pkg/authenticator/token/oidc/metrics.go, lines 51-68
// (ALPHA; a JWT authenticator's JWKS, recorded at each fetch: the first token it verifies, then
// each unknown kid).
const (
	// The configuration the member runs (an info gauge, 1, its hash as a label; line 57).
	metricAuthnConfigInfo = "apiserver_authentication_config_controller_last_config_info"
	// Automatic reloads by status, "success" or "failure" (BETA; line 36).
	metricAuthnReloads = "apiserver_authentication_config_controller_automatic_reloads_total"
	// When the last reload of each status happened (BETA; line 47).
	metricAuthnReloadLast = "apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds"
	// The last JWKS each JWT authenticator fetched (an info gauge; line 63).
	metricJWKSKeySet = "apiserver_authentication_jwt_authenticator_jwks_fetch_last_key_set_info"
	// When its last fetch of each result happened ("success", "failure"; line 52).
	metricJWKSFetchLast = "apiserver_authentication_jwt_authenticator_jwks_fetch_last_timestamp_seconds"
)

// parseAuthn reads the structured authentication families; nil when none has a sample.
func parseAuthn(fams map[string]*dto.MetricFamily) *AuthnMetrics {
	var a AuthnMetrics
	found := false
	id := func(mt *dto.Metric) {
		if h := label(mt, "apiserver_id_hash"); h != "" {
			a.APIServerIDHash = h
		}
		found = true
	}
	for _, mt := range fams[metricAuthnConfigInfo].GetMetric() {
		id(mt)
		a.ConfigHash = label(mt, "hash")
	}
	if f := fams[metricAuthnReloads]; len(f.GetMetric()) > 0 {
		id(f.GetMetric()[0])
		a.Reloads = byLabel(f, "status")
	}
	for _, mt := range fams[metricAuthnReloadLast].GetMetric() {
		id(mt)
		if a.LastReload == nil {
			a.LastReload = map[string]float64{}
		}
		a.LastReload[label(mt, "status")] = value(mt)
	}
	issuer := func(mt *dto.Metric) (string, JWKSFetch) {
		id(mt)
		if a.Issuers == nil {
			a.Issuers = map[string]JWKSFetch{}
		}
		h := label(mt, "jwt_issuer_hash")
		return h, a.Issuers[h]
	}
	for _, mt := range fams[metricJWKSKeySet].GetMetric() {
		h, j := issuer(mt)
		j.KeySetHash = label(mt, "hash")
		a.Issuers[h] = j
	}
	for _, mt := range fams[metricJWKSFetchLast].GetMetric() {
		h, j := issuer(mt)
		switch label(mt, "result") {
		case "success":
			j.LastSuccess = value(mt)
		case "failure":
			j.LastFailure = value(mt)
		}
		a.Issuers[h] = j
	}
	if !found {
		return nil
	}
	return &a
}

// label is a sample's value of one label ("" when it has none).
func label(mt *dto.Metric, name string) string {
	for _, l := range mt.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// The external JWT signer's families: k8s.io/kubernetes
// pkg/serviceaccount/externaljwt/metrics/metrics.go at v1.36.3, lines 39-81 (namespace apiserver,
// subsystem externaljwt; all ALPHA). kube-apiserver registers them whether or not it has a signer,
// but a family shows a sample only once it was set: a member without a signer exports none.
const (
	// Unix time of the last FetchKeys that succeeded (line 43).
	metricFetchKeysSuccess = "apiserver_externaljwt_fetch_keys_success_timestamp"
	// The data_timestamp that FetchKeys returned (line 54).
	metricFetchKeysData = "apiserver_externaljwt_fetch_keys_data_timestamp"
	// FetchKeys attempts by gRPC code ("OK", "Unavailable", ..., "unknown-non-grpc"; line 65).
	metricFetchKeysTotal = "apiserver_externaljwt_fetch_keys_request_total"
	// Sign attempts by gRPC code (line 76).
	metricSignTotal = "apiserver_externaljwt_sign_request_total"
)

// parseSigner reads the external signer's families; nil when none has a sample.
func parseSigner(fams map[string]*dto.MetricFamily) *SignerMetrics {
	var s SignerMetrics
	found := false
	if f := fams[metricFetchKeysSuccess]; len(f.GetMetric()) > 0 {
		s.FetchKeysSuccess, found = value(f.GetMetric()[0]), true
	}
	if f := fams[metricFetchKeysData]; len(f.GetMetric()) > 0 {
		s.DataTimestamp, found = value(f.GetMetric()[0]), true
	}
	if f := fams[metricFetchKeysTotal]; len(f.GetMetric()) > 0 {
		s.FetchKeys, found = byLabel(f, "code"), true
	}
	if f := fams[metricSignTotal]; len(f.GetMetric()) > 0 {
		s.Sign, found = byLabel(f, "code"), true
	}
	if !found {
		return nil
	}
	return &s
}

// byLabel sums a family's samples by the value of one label.
func byLabel(f *dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	for _, mt := range f.GetMetric() {
		out[label(mt, name)] += value(mt)
	}
	return out
}

func sum(f *dto.MetricFamily) float64 {
	var s float64
	for _, m := range f.GetMetric() {
		s += value(m)
	}
	return s
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}
