// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import "testing"

const (
	cfgA   = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	cfgB   = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	issH   = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	jwksA  = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
	jwksB  = "sha256:4444444444444444444444444444444444444444444444444444444444444444"
	tLoad  = 1.7966e+09
	tLater = 1.7967e+09
)

// authnMember is a member running configuration cfg ("" : none) whose last reloads are
// lastSuccess and lastFailure (0: none) and whose JWT authenticator fetched jwks.
func authnMember(name, cfg string, lastSuccess, lastFailure float64, jwks *JWKSFetch) Member {
	m := member(name, issA, kidA)
	a := &AuthnMetrics{APIServerIDHash: "sha256:id-" + name, ConfigHash: cfg, Reloads: map[string]float64{}, LastReload: map[string]float64{}}
	if lastSuccess > 0 {
		a.Reloads["success"], a.LastReload["success"] = 1, lastSuccess
	}
	if lastFailure > 0 {
		a.Reloads["failure"], a.LastReload["failure"] = 2, lastFailure
	}
	if jwks != nil {
		a.Issuers = map[string]JWKSFetch{issH: *jwks}
	}
	if cfg == "" && jwks == nil {
		a = nil
	}
	m.Metrics = &Metrics{Authn: a}
	return m
}

func TestCheckAuthn(t *testing.T) {
	ok := &JWKSFetch{KeySetHash: jwksA, LastSuccess: tLoad}
	healthy := func(name string) Member { return authnMember(name, cfgA, 0, 0, ok) }
	tests := []struct {
		name    string
		members []Member
		want    []string // ID@member:severity
		wantMsg string
	}{
		{name: "same configuration, same keys", members: []Member{healthy("a"), healthy("b"), healthy("c")}},
		{name: "same configuration, no token verified yet", members: []Member{authnMember("a", cfgA, 0, 0, nil), authnMember("b", cfgA, 0, 0, nil)}},
		{name: "no member runs one", members: []Member{authnMember("a", "", 0, 0, nil), authnMember("b", "", 0, 0, nil)}},
		{name: "edited and reloaded everywhere", members: []Member{authnMember("a", cfgB, tLoad, 0, ok), authnMember("b", cfgB, tLoad, 0, ok)}},
		{name: "one member runs another",
			members: []Member{healthy("a"), healthy("b"), authnMember("c", cfgB, tLoad, 0, ok)},
			want:    []string{"authn-config-differs@c:warning"}, wantMsg: "member c runs AuthenticationConfiguration sha256:bbbbbbbbbbbb; most members run sha256:aaaaaaaaaaaa"},
		{name: "one member runs none",
			members: []Member{healthy("a"), healthy("b"), authnMember("c", "", 0, 0, nil)},
			want:    []string{"authn-config-differs@c:warning"}, wantMsg: "member c runs no AuthenticationConfiguration"},
		{name: "an even split names both",
			members: []Member{healthy("a"), authnMember("b", cfgB, tLoad, 0, ok)},
			want:    []string{"authn-config-differs@a:warning", "authn-config-differs@b:warning"}, wantMsg: "split evenly"},
		{name: "a reload failed",
			members: []Member{healthy("a"), authnMember("b", cfgA, tLoad, tLater, ok)},
			want:    []string{"authn-config-reload-failed@b:warning"}, wantMsg: "member b failed to reload its AuthenticationConfiguration at 2026-12-08T03:20:00Z (reloads failed: 2, succeeded: 1): it keeps running configuration sha256:aaaaaaaaaaaa"},
		{name: "a failed reload then a good one", members: []Member{healthy("a"), authnMember("b", cfgA, tLater, tLoad, ok)}},
		{name: "JWKS never fetched",
			members: []Member{healthy("a"), authnMember("b", cfgA, 0, 0, &JWKSFetch{LastFailure: tLater})},
			want:    []string{"jwt-authenticator-no-keys@b:error"}, wantMsg: "member b's JWT authenticator for issuer sha256:111111111111 has no keys"},
		{name: "JWKS fetch failed after a success",
			members: []Member{healthy("a"), authnMember("b", cfgA, 0, 0, &JWKSFetch{KeySetHash: jwksA, LastSuccess: tLoad, LastFailure: tLater})},
			want:    []string{"jwt-authenticator-no-keys@b:warning"}, wantMsg: "last failed to fetch its JWKS"},
		{name: "one member holds another key set",
			members: []Member{healthy("a"), healthy("b"), authnMember("c", cfgA, 0, 0, &JWKSFetch{KeySetHash: jwksB, LastSuccess: tLater})},
			want:    []string{"jwt-jwks-differs@c:warning"}, wantMsg: "member c's JWT authenticator for issuer sha256:111111111111 holds key set sha256:444444444444; most members hold sha256:333333333333"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantFindings(t, checkAuthn(snapshot(tt.members...)), tt.want, tt.wantMsg)
		})
	}
}
