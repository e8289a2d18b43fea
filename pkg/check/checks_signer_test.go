// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
)

// signerMember is a member whose signer serves kids (published in its JWKS) and signs with the
// first; fetched is how long ago its last FetchKeys succeeded, failed how many failed since start,
// maxAge its JWKS Cache-Control max-age.
func signerMember(name string, kids []string, fetchedSecondsAgo, failed float64, maxAge int) Member {
	m := member(name, issA, kids[0])
	m.JWKS = nil
	for _, k := range kids {
		m.JWKS = append(m.JWKS, JWK{KID: k, Alg: "RS256", Kty: "RSA"})
	}
	m.JWKSMaxAge = &maxAge
	succ := float64(now.Unix()) - fetchedSecondsAgo
	codes := map[string]float64{"OK": 3}
	if failed > 0 {
		codes["Unavailable"] = failed
	}
	m.Metrics = &Metrics{Signer: &SignerMetrics{FetchKeysSuccess: succ, DataTimestamp: 1.7966128e+09, FetchKeys: codes, Sign: map[string]float64{"OK": 5}}}
	return m
}

func TestCheckSigners(t *testing.T) {
	const kidC = "kidCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"
	healthy := func(name string) Member { return signerMember(name, []string{kidA}, 20, 0, 40) }
	tests := []struct {
		name    string
		members []Member
		want    []string // ID@member:severity
		wantMsg string
	}{
		{name: "healthy signers", members: []Member{healthy("a"), healthy("b"), healthy("c")}},
		{name: "key files, no signer metrics", members: []Member{member("a", issA, kidA), member("b", issA, kidB)}},
		{name: "one signer serves another key",
			members: []Member{healthy("a"), healthy("b"), signerMember("c", []string{kidB}, 20, 0, 40)},
			want:    []string{"signer-key-sets-differ@c:error"}, wantMsg: "the external signer of member c serves keys [kidBBBBBBBBB…]; most members' signers serve [kidAAAAAAAAA…]: tokens minted through it"},
		{name: "a key published ahead on one member",
			members: []Member{healthy("a"), healthy("b"), signerMember("c", []string{kidA, kidC}, 20, 0, 40)},
			want:    []string{"signer-key-sets-differ@c:warning"}, wantMsg: "each side still has the key the other signs with"},
		{name: "an even split names both",
			members: []Member{healthy("a"), signerMember("b", []string{kidB}, 20, 0, 40)},
			want:    []string{"signer-key-sets-differ@a:warning", "signer-key-sets-differ@b:warning"}, wantMsg: "split evenly"},
		{name: "stale: failures, refresh overdue, last success 80 s ago",
			members: []Member{healthy("a"), signerMember("b", []string{kidA}, 80, 3, 0)},
			want:    []string{"signer-keys-stale@b:warning"}, wantMsg: "member b has not fetched its external signer's keys for 1m20s (FetchKeys failed 3 times: Unavailable 3)"},
		{name: "failures long ago, refreshed since", members: []Member{healthy("a"), signerMember("b", []string{kidA}, 30, 3, 30)}},
		{name: "refresh due this instant, no failure", members: []Member{healthy("a"), signerMember("b", []string{kidA}, 60, 0, 0)}},
		{name: "failed within the retry period", members: []Member{healthy("a"), signerMember("b", []string{kidA}, 5, 1, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantFindings(t, checkSigners(snapshot(tt.members...)), tt.want, tt.wantMsg)
		})
	}
}

// wantFindings asserts that fs are exactly want (ID@member:severity, in any order), that the
// first message holds wantMsg, and that every ID is in the catalogue.
func wantFindings(t *testing.T, fs []finding.Finding, want []string, wantMsg string) {
	t.Helper()
	var got []string
	for _, f := range fs {
		got = append(got, f.ID+"@"+f.Member+":"+string(f.Severity))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("findings %v, want %v (%+v)", got, want, fs)
	}
	if wantMsg != "" && !strings.Contains(fs[0].Message, wantMsg) {
		t.Errorf("message %q lacks %q", fs[0].Message, wantMsg)
	}
	for _, f := range fs {
		if _, ok := catalogue.Default().Get(f.ID); !ok {
			t.Errorf("%s is not in the catalogue", f.ID)
		}
	}
}
