// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/apiserver"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/pki"
)

// signerMember is a lab member signing through the external signer on socket, with an
// AuthenticationConfiguration file when authn is set.
func signerMember(n int, authn string) lab.Member {
	name := "apiserver-" + string(rune('0'+n))
	ip := "10.99.0." + string(rune('0'+n))
	args := apiserver.Config{IP: ip, Port: 6443, EtcdURL: "https://127.0.0.1:2379", ClientCAFile: "/lab/pki/ca.crt",
		CertFile: "/lab/pki/" + name + ".crt", KeyFile: "/lab/pki/" + name + ".key", CertDir: "/lab/pki",
		SigningEndpoint: "/lab/signers/" + name[len(name)-1:] + "/signer.sock", Issuers: []string{labIssuer},
		ServiceCIDR: "10.96.0.0/16", AuthenticationConfigFile: authn}.Args()
	return lab.Member{Name: name, Address: ip + ":6443", Args: append([]string{"/lab/bin/kube-apiserver"}, args...), AuthenticationConfigFile: authn}
}

// TestPredictPlanes: preflight, given signer members' flags with their signers' keys, or a
// member's AuthenticationConfiguration before and after an edit, predicts the lab's changes.
func TestPredictPlanes(t *testing.T) {
	dir := t.TempDir()
	shared, other := filepath.Join(dir, "shared.key"), filepath.Join(dir, "other.key")
	for _, k := range []string{shared, other} {
		if err := pki.NewSAKey(k, k+".pub"); err != nil {
			t.Fatal(err)
		}
	}
	olds := []lab.Member{signerMember(1, ""), signerMember(2, "")}
	const base = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: https://oidc.credwatch.lab\n    audiences: [credwatch-lab]\n  claimMappings:\n    username: {claim: sub, prefix: 'oidc:'}\n"
	const bad = base + "- issuer:\n    url: " + labIssuer + "\n    audiences: [credwatch-lab-v2]\n  claimMappings:\n    username: {claim: sub, prefix: 'oidc:'}\n"
	authn := signerMember(1, "/lab/authn/apiserver-1.yaml")
	tests := []struct {
		name      string
		cur, plan plane
		obs, want []string
	}{
		{"signer-key-divergence", plane{members: olds, keyFiles: []string{shared}}, plane{members: []lab.Member{signerMember(3, "")}, keyFiles: []string{other}}, staticObservable, []string{"sa-key-change"}},
		{"signers with the same keys", plane{members: olds, keyFiles: []string{shared}}, plane{members: []lab.Member{signerMember(3, "")}, keyFiles: []string{shared}}, staticObservable, []string{"no-change"}},
		{"authn edit with the SA issuer", plane{members: []lab.Member{authn}, docs: map[string][]byte{"apiserver-1.yaml": []byte(base)}}, plane{members: []lab.Member{authn}, docs: map[string][]byte{"apiserver-1.yaml": []byte(bad)}}, authnObservable, []string{"authn-config-issuer-is-sa-issuer"}},
		{"authn edit without it", plane{members: []lab.Member{authn}, docs: map[string][]byte{"apiserver-1.yaml": []byte(base)}}, plane{members: []lab.Member{authn}, docs: map[string][]byte{"apiserver-1.yaml": []byte(base)}}, authnObservable, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := predictPlanes(context.Background(), tt.cur, tt.plan, tt.obs)
			if p.Error != "" {
				t.Fatal(p.Error)
			}
			if got := p.observable(); !slices.Equal(got, tt.want) {
				t.Errorf("predicted %v (observable %v), want %v", p.Predicted, got, tt.want)
			}
		})
	}
}
