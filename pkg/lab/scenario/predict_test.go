// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"slices"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/apiserver"
	"github.com/credwatch/credwatch/pkg/lab/tally"
)

const labIssuer = "https://kubernetes.default.svc.cluster.local"

// member is a lab member with the flags the lab would start it with.
func member(n int, key string, issuers, audiences []string) lab.Member {
	name := "apiserver-" + string(rune('0'+n))
	ip := "10.99.0." + string(rune('0'+n))
	args := apiserver.Config{IP: ip, Port: 6443, EtcdURL: "https://127.0.0.1:2379", ClientCAFile: "/lab/pki/ca.crt",
		CertFile: "/lab/pki/" + name + ".crt", KeyFile: "/lab/pki/" + name + ".key", CertDir: "/lab/pki",
		SAKeyFile: "/lab/sa/" + key + ".key", SAPubFile: "/lab/sa/" + key + ".pub", Issuers: issuers, Audiences: audiences,
		ServiceCIDR: "10.96.0.0/16"}.Args()
	return lab.Member{Name: name, Address: ip + ":6443", Args: append([]string{"/lab/bin/kube-apiserver"}, args...)}
}

// TestPredictStatic: preflight, given the lab members' flags as static-pod manifests, predicts
// each of the lab's control-plane changes.
func TestPredictStatic(t *testing.T) {
	olds := []lab.Member{member(1, "sa", []string{labIssuer}, nil), member(2, "sa", []string{labIssuer}, nil)}
	const newIssuer = "https://issuer.credwatch.example"
	tests := []struct {
		name  string
		added lab.Member
		want  []string
	}{
		{"healthy-roll", member(3, "sa", []string{labIssuer}, nil), []string{"no-change"}},
		{"key-drift", member(3, "apiserver-3", []string{labIssuer}, nil), []string{"sa-key-change"}},
		{"issuer not kept", member(3, "sa", []string{newIssuer}, nil), []string{"issuer-change-drops-old", "issuer-switch-before-all-accept"}},
		{"issuer kept", member(3, "sa", []string{newIssuer, labIssuer}, nil), []string{"issuer-switch-before-all-accept"}},
		{"audience-change", member(3, "sa", []string{labIssuer}, []string{"https://audience.credwatch.example"}), []string{"audience-change-drops-old"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := predictStatic(olds, tt.added)
			if p.Error != "" {
				t.Fatal(p.Error)
			}
			if got := p.observable(); !slices.Equal(got, tt.want) {
				t.Errorf("predicted %v (observable %v), want %v", p.Predicted, got, tt.want)
			}
		})
	}
}

// TestStaticObserved: what a phase's rejections and the members' messages show.
func TestStaticObserved(t *testing.T) {
	const bare = "invalid bearer token"
	phase := func(pairs []tally.Pair, logs map[string]string) Phase {
		ph := Phase{Tenants: tally.Snapshot{Pairs: pairs}}
		for _, name := range []string{"old", "new"} {
			me := MemberEvidence{Name: name}
			if msg, ok := logs[name]; ok {
				me.AuthMessages = []MessageCount{{Message: msg, Count: 1}}
			}
			ph.Members = append(ph.Members, me)
		}
		return ph
	}
	rej := func(minted, served string) tally.Pair {
		return tally.Pair{MintedBy: minted, ServedBy: served, Requests: 3, Unauthorized: 3}
	}
	ok := func(minted, served string) tally.Pair {
		return tally.Pair{MintedBy: minted, ServedBy: served, Requests: 3}
	}
	tests := []struct {
		name string
		ph   Phase
		want []string
	}{
		{"nothing rejected", phase([]tally.Pair{ok("old", "new"), ok("new", "old")}, nil), []string{"no-change"}},
		{"key drift", phase([]tally.Pair{rej("old", "new"), rej("new", "old")},
			map[string]string{"old": "[" + bare + ", invalid signature, no keys found]", "new": "[" + bare + ", invalid signature, no keys found]"}),
			[]string{"sa-key-change"}},
		{"issuer not kept", phase([]tally.Pair{rej("old", "new"), rej("new", "old")}, map[string]string{"old": bare, "new": bare}),
			[]string{"issuer-change-drops-old", "issuer-switch-before-all-accept"}},
		{"issuer kept", phase([]tally.Pair{ok("old", "new"), rej("new", "old")}, map[string]string{"old": bare}),
			[]string{"issuer-switch-before-all-accept"}},
		{"audience", phase([]tally.Pair{rej("old", "new")},
			map[string]string{"new": `[` + bare + `, token audiences ["a"] is invalid for the target audiences ["b"]]`}),
			[]string{"audience-change-drops-old"}},
		{"a failure with no pair", phase(nil, map[string]string{"old": bare}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := staticObserved(tt.ph, []string{"new"}); !slices.Equal(got, tt.want) {
				t.Errorf("observed %v, want %v", got, tt.want)
			}
		})
	}
}
