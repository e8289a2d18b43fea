// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package apiserver

import (
	"slices"
	"strings"
	"testing"
)

func TestArgs(t *testing.T) {
	base := Config{IP: "10.200.7.2", Port: 6443, EtcdURL: "http://10.200.7.2:2379", Issuers: []string{"https://a", "https://b"}}
	tests := []struct {
		name      string
		audiences []string
		want      []string
		absent    string
	}{
		{name: "issuers in order, no audiences", want: []string{"--service-account-issuer=https://a", "--service-account-issuer=https://b"}, absent: "--api-audiences="},
		{name: "audiences joined", audiences: []string{"x", "y"}, want: []string{"--api-audiences=x,y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			c.Audiences = tt.audiences
			args := c.Args()
			i := slices.Index(args, tt.want[0])
			if i < 0 || !slices.Equal(args[i:i+len(tt.want)], tt.want) {
				t.Errorf("args %q lack %q in order", args, tt.want)
			}
			if tt.absent != "" && slices.ContainsFunc(args, func(a string) bool { return len(a) >= len(tt.absent) && a[:len(tt.absent)] == tt.absent }) {
				t.Errorf("args %q carry %s", args, tt.absent)
			}
			if !slices.Contains(args, "--etcd-servers=http://10.200.7.2:2379") || !slices.Contains(args, "--secure-port=6443") {
				t.Errorf("args %q lack etcd or port", args)
			}
		})
	}
}

// TestArgsExternalSigner: a member with an external signer names its socket and no key file
// (kube-apiserver refuses either key flag beside the endpoint).
func TestArgsExternalSigner(t *testing.T) {
	c := Config{SAKeyFile: "/lab/sa/sa.key", SAPubFile: "/lab/sa/sa.pub", SigningEndpoint: "/lab/signers/1/signer.sock"}
	args := c.Args()
	if !slices.Contains(args, "--service-account-signing-endpoint=/lab/signers/1/signer.sock") {
		t.Errorf("args %q lack the signing endpoint", args)
	}
	for _, a := range args {
		if strings.HasPrefix(a, "--service-account-signing-key-file") || strings.HasPrefix(a, "--service-account-key-file") {
			t.Errorf("args carry %s beside the signing endpoint", a)
		}
	}
	c.SigningEndpoint = ""
	if args := c.Args(); !slices.Contains(args, "--service-account-key-file=/lab/sa/sa.pub") || slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "--service-account-signing-endpoint")
	}) {
		t.Errorf("args without a signer = %q, want the key files", args)
	}
}

// TestAuthenticationConfig: the flag names the file, and the file is the v1 kind with the
// issuer, its CA, audiences and a prefixed username claim.
func TestAuthenticationConfig(t *testing.T) {
	if args := (Config{}).Args(); slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--authentication-config") }) {
		t.Errorf("args without a file carry --authentication-config: %q", args)
	}
	if args := (Config{AuthenticationConfigFile: "/lab/authn/apiserver-1.yaml"}).Args(); !slices.Contains(args, "--authentication-config=/lab/authn/apiserver-1.yaml") {
		t.Errorf("args %q lack --authentication-config", args)
	}
	data, err := NewJWTAuthentication("https://10.200.7.1:8443", []byte("-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n"), []string{"credwatch-lab"}, "sub", "oidc:").Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"apiVersion: apiserver.config.k8s.io/v1", "kind: AuthenticationConfiguration", "url: https://10.200.7.1:8443",
		"certificateAuthority: |", "- credwatch-lab", "claim: sub", "prefix: 'oidc:'"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("configuration lacks %q:\n%s", want, data)
		}
	}
}
