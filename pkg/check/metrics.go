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
		m.AuthAttempts = map[string]float64{}
		for _, mt := range f.GetMetric() {
			result := ""
			for _, l := range mt.GetLabel() {
				if l.GetName() == "result" {
					result = l.GetValue()
				}
			}
			m.AuthAttempts[result] += value(mt)
		}
	}
	return m, nil
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
