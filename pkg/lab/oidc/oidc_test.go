// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package oidc

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/pki"
)

func startTest(t *testing.T) (*Issuer, *http.Client) {
	t.Helper()
	ca, err := pki.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	crt, key, err := ca.Issue("oidc-issuer", nil, []net.IP{net.ParseIP("127.0.0.1")}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	i, err := Start(Config{Addr: "127.0.0.1:0", CertPEM: crt, KeyPEM: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = i.Close() })
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}, DisableKeepAlives: true}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := i.WaitServing(ctx, c); err != nil {
		t.Fatal(err)
	}
	return i, c
}

func get(t *testing.T, c *http.Client, url string, v any) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// verify checks tok against the issuer's JWKS as a relying party would and returns its claims.
func verify(t *testing.T, i *Issuer, c *http.Client, tok string) (jwt.Claims, error) {
	t.Helper()
	var set jose.JSONWebKeySet
	get(t, c, i.URL()+JWKSPath, &set)
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return jwt.Claims{}, err
	}
	var cl jwt.Claims
	return cl, parsed.Claims(set, &cl)
}

func TestDiscoveryJWKSAndMint(t *testing.T) {
	i, c := startTest(t)
	var d Discovery
	get(t, c, i.URL()+DiscoveryPath, &d)
	if d.Issuer != i.URL() || d.JWKSURI != i.URL()+JWKSPath || !slices.Contains(d.Algs, "RS256") {
		t.Fatalf("discovery = %+v", d)
	}
	tok, err := i.Mint(Claims{Subject: "alice", Audience: []string{"credwatch-lab"}})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := verify(t, i, c, tok)
	if err != nil {
		t.Fatalf("token does not verify against the JWKS: %v", err)
	}
	if cl.Issuer != i.URL() || cl.Subject != "alice" || !cl.Audience.Contains("credwatch-lab") || cl.ID == "" {
		t.Errorf("claims = %+v", cl)
	}
	if _, err := i.Mint(Claims{Subject: "alice"}); err == nil {
		t.Error("Mint without an audience: no error")
	}
	if n := i.Requests()[JWKSPath]; n != 1 {
		t.Errorf("JWKS requests = %d, want 1", n)
	}
}

func TestRotateWithholdReachable(t *testing.T) {
	i, c := startTest(t)
	old, _ := i.Mint(Claims{Subject: "alice", Audience: []string{"a"}})
	oldKID := i.SigningKeyID()
	tests := []struct {
		name    string
		do      func() error
		kids    int
		oldOK   bool
		freshOK bool
	}{
		{name: "rotate keeping the old key", do: func() error { return i.Rotate(true) }, kids: 2, oldOK: true, freshOK: true},
		{name: "rotate dropping the old keys", do: func() error { return i.Rotate(false) }, kids: 1, freshOK: true},
		{name: "withhold the signing key", do: func() error { i.Withhold(true); return nil }, kids: 0},
		{name: "put it back", do: func() error { i.Withhold(false); return nil }, kids: 1, freshOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); err != nil {
				t.Fatal(err)
			}
			if got := i.KeyIDs(); len(got) != tt.kids {
				t.Errorf("kids = %v, want %d", got, tt.kids)
			}
			fresh, _ := i.Mint(Claims{Subject: "bob", Audience: []string{"a"}})
			if _, err := verify(t, i, c, old); (err == nil) != tt.oldOK {
				t.Errorf("old token verifies: %v, want %t", err, tt.oldOK)
			}
			if _, err := verify(t, i, c, fresh); (err == nil) != tt.freshOK {
				t.Errorf("fresh token verifies: %v, want %t", err, tt.freshOK)
			}
		})
	}
	if i.SigningKeyID() == oldKID {
		t.Error("the signing kid did not change")
	}
	if err := i.SetReachable(false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(i.URL() + DiscoveryPath); err == nil {
		t.Error("an unreachable issuer answered")
	}
	if err := i.SetReachable(true); err != nil {
		t.Fatal(err)
	}
	var d Discovery
	get(t, c, i.URL()+DiscoveryPath, &d)
	i.FailJWKS(http.StatusServiceUnavailable)
	resp, err := c.Get(i.URL() + JWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("JWKS with FailJWKS(503): HTTP %d", resp.StatusCode)
	}
	get(t, c, i.URL()+DiscoveryPath, &d) // discovery still answers
	i.FailJWKS(0)
	var set jose.JSONWebKeySet
	get(t, c, i.URL()+JWKSPath, &set)
}

// TestNoKeyMaterial: what the issuer serves holds public keys only.
func TestNoKeyMaterial(t *testing.T) {
	i, c := startTest(t)
	resp, err := c.Get(i.URL() + JWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw map[string][]map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range raw["keys"] {
		for _, priv := range []string{"d", "p", "q", "dp", "dq", "qi"} {
			if _, ok := k[priv]; ok {
				t.Errorf("JWKS key %v carries private member %q", k["kid"], priv)
			}
		}
		if kid, _ := k["kid"].(string); kid == "" || strings.ContainsAny(kid, "=+/") {
			t.Errorf("kid %q is not a base64url thumbprint", kid)
		}
	}
}
