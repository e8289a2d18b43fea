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
	return m, nil
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
func byLabel(f *dto.MetricFamily, label string) map[string]float64 {
	out := map[string]float64{}
	for _, mt := range f.GetMetric() {
		v := ""
		for _, l := range mt.GetLabel() {
			if l.GetName() == label {
				v = l.GetValue()
			}
		}
		out[v] += value(mt)
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
