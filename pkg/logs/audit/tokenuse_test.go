// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package audit

import "testing"

func TestTokenUse(t *testing.T) {
	t.Parallel()
	const stale = "subject: system:serviceaccount:monitoring:prometheus, seconds after warning threshold: 4185802"
	for _, tt := range []struct {
		name  string
		stage string
		code  int
		ann   map[string]string
		want  TokenUse // zero: none
	}{
		{"stale", "ResponseComplete", 200, map[string]string{StaleTokenKey: stale}, TokenUse{TokenStale, "monitoring", "prometheus"}},
		{"stale, refused after authentication", "ResponseComplete", 403, map[string]string{StaleTokenKey: stale}, TokenUse{TokenStale, "monitoring", "prometheus"}},
		{"stale, no stage", "", 200, map[string]string{StaleTokenKey: stale}, TokenUse{TokenStale, "monitoring", "prometheus"}},
		{"stale at RequestReceived", "RequestReceived", 0, map[string]string{StaleTokenKey: stale}, TokenUse{}},
		{"stale at ResponseStarted (a watch)", "ResponseStarted", 200, map[string]string{StaleTokenKey: stale}, TokenUse{}},
		{"legacy", "ResponseComplete", 200, map[string]string{LegacyTokenKey: "system:serviceaccount:ci:deployer"}, TokenUse{TokenLegacy, "ci", "deployer"}},
		{"legacy panicked", "Panic", 500, map[string]string{LegacyTokenKey: "system:serviceaccount:ci:deployer"}, TokenUse{TokenLegacy, "ci", "deployer"}},
		{"legacy refused (no token cache)", "ResponseStarted", 401, map[string]string{LegacyTokenKey: "system:serviceaccount:ci:old-bot"}, TokenUse{}},
		{"legacy refused, at ResponseComplete", "ResponseComplete", 401, map[string]string{LegacyTokenKey: "system:serviceaccount:ci:old-bot"}, TokenUse{}},
		{"refused, no annotation", "ResponseStarted", 401, nil, TokenUse{}},
		{"no annotation", "ResponseComplete", 200, map[string]string{"authorization.k8s.io/decision": "allow"}, TokenUse{}},
		{"not a service account", "ResponseComplete", 200, map[string]string{LegacyTokenKey: "system:node:node-a"}, TokenUse{}},
		{"invalid namespace", "ResponseComplete", 200, map[string]string{LegacyTokenKey: "system:serviceaccount:Bad_NS:x"}, TokenUse{}},
		{"no name", "ResponseComplete", 200, map[string]string{LegacyTokenKey: "system:serviceaccount:ci"}, TokenUse{}},
		{"stale value of another shape", "ResponseComplete", 200, map[string]string{StaleTokenKey: "system:serviceaccount:a:b"}, TokenUse{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ev := Event{Stage: tt.stage, Annotations: tt.ann}
			if tt.code != 0 {
				ev.ResponseStatus = &struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				}{Code: tt.code}
			}
			got, ok := ev.TokenUse()
			if ok != (tt.want != TokenUse{}) || got != tt.want {
				t.Errorf("got %+v %v, want %+v", got, ok, tt.want)
			}
		})
	}
}

func TestMayNameTokenUse(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]bool{
		`{"annotations":{"authentication.k8s.io/stale-token":"subject: …"}}`:                 true,
		`{"annotations":{"authentication.k8s.io/legacy-token":"system:serviceaccount:a:b"}}`: true,
		`{"annotations":{"authentication.k8s.io/legacy-token-manual-secret":"s"}}`:           false,
		`{"annotations":{"authorization.k8s.io/decision":"allow"}}`:                          false,
	} {
		if got := MayNameTokenUse(line); got != want {
			t.Errorf("%s: %v, want %v", line, got, want)
		}
	}
}
