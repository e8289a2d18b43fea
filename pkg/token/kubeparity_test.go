// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token

import (
	"crypto/rsa"
	"strings"
	"testing"
	"time"

	josev2 "gopkg.in/go-jose/go-jose.v2"
	jwtv2 "gopkg.in/go-jose/go-jose.v2/jwt"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/kubever"
)

// The types and the signing path below replicate kube-apiserver v1.36
// (pkg/serviceaccount/claims.go Claims, jwt.go signerFromRSAPrivateKey and GenerateToken) with the
// go-jose v2 module it uses (gopkg.in/go-jose/go-jose.v2 v2.6.3). RS256 signatures are
// deterministic, so Mint must produce the very same token, byte for byte.
type kubePrivateClaims struct {
	Kubernetes kubeClaims `json:"kubernetes.io,omitempty"`
}

type kubeClaims struct {
	Namespace string             `json:"namespace,omitempty"`
	Svcacct   kubeRef            `json:"serviceaccount,omitempty"`
	Pod       *kubeRef           `json:"pod,omitempty"`
	Secret    *kubeRef           `json:"secret,omitempty"`
	Node      *kubeRef           `json:"node,omitempty"`
	WarnAfter *jwtv2.NumericDate `json:"warnafter,omitempty"`
}

type kubeRef struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

type kubeLegacyClaims struct {
	ServiceAccountName string `json:"kubernetes.io/serviceaccount/service-account.name"`
	ServiceAccountUID  string `json:"kubernetes.io/serviceaccount/service-account.uid"`
	SecretName         string `json:"kubernetes.io/serviceaccount/secret.name"`
	Namespace          string `json:"kubernetes.io/serviceaccount/namespace"`
}

func kubeGenerate(t *testing.T, k *rsa.PrivateKey, kid, iss string, claims *jwtv2.Claims, private any) string {
	t.Helper()
	signer, err := josev2.NewSigner(josev2.SigningKey{Algorithm: josev2.RS256,
		Key: &josev2.JSONWebKey{Algorithm: string(josev2.RS256), Key: k, KeyID: kid, Use: "sig"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwtv2.Signed(signer).Claims(private).Claims(claims).Claims(&jwtv2.Claims{Issuer: iss}).CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMintIsByteIdenticalToKubeAPIServer(t *testing.T) {
	tk := getTestKeys(t)
	priv := tk.rsa.Private.(*rsa.PrivateKey)
	now := t0
	jti := "6d7f8a90-0000-4000-8000-000000000001"

	// Extended pod-bound token, as TokenRequest issues it for the kubelet.
	warn := jwtv2.NewNumericDate(now.Add(WarnOnlyExpirationSeconds * time.Second))
	want := kubeGenerate(t, priv, tk.rsa.KeyID, newIss, &jwtv2.Claims{
		Subject: "system:serviceaccount:default:app", Audience: jwtv2.Audience{newIss},
		IssuedAt: jwtv2.NewNumericDate(now), NotBefore: jwtv2.NewNumericDate(now),
		Expiry: jwtv2.NewNumericDate(now.Add(ExtendedExpiration)), ID: jti,
	}, &kubePrivateClaims{Kubernetes: kubeClaims{Namespace: "default", Svcacct: kubeRef{"app", "sa-uid-1"},
		Pod: &kubeRef{"web-0", "pod-uid-1"}, Node: &kubeRef{"node-a", "node-uid-1"}, WarnAfter: warn}})
	o := podToken(tk.rsa, newIss, now)
	o.ExpirationSeconds, o.Extend = WarnOnlyExpirationSeconds, true
	if got := mustMint(t, o); got != want {
		t.Errorf("bound token differs from kube-apiserver's\n got %s\nwant %s", got, want)
	}

	// Legacy secret-based token, as kube-controller-manager's tokens controller signs it.
	want = kubeGenerate(t, priv, tk.rsa.KeyID, LegacyIssuer, &jwtv2.Claims{Subject: "system:serviceaccount:default:app"},
		&kubeLegacyClaims{ServiceAccountName: "app", ServiceAccountUID: "sa-uid-1", SecretName: "app-token-x", Namespace: "default"})
	got := mustMint(t, MintOptions{Key: tk.rsa, Legacy: true, LegacySecret: "app-token-x", Namespace: "default", ServiceAccount: Ref{Name: "app", UID: "sa-uid-1"}})
	if got != want {
		t.Errorf("legacy token differs from kube-controller-manager's\n got %s\nwant %s", got, want)
	}
}

// TestCryptoSpellingMatchesGoJoseV2 checks the ≥1.33 spelling against the error go-jose v2.6.3
// really returns for a token signed by another key.
func TestCryptoSpellingMatchesGoJoseV2(t *testing.T) {
	tk := getTestKeys(t)
	tok := mustMint(t, podToken(tk.drift, newIss, t0))
	parsed, err := jwtv2.ParseSigned(tok)
	if err != nil {
		t.Fatal(err)
	}
	var c jwtv2.Claims
	err = parsed.Claims(tk.rsa.Public, &c)
	want := catalogue.Default().MustGet("signing-key-unknown").Format("crypto", kubever.MustParse("1.33"))
	if err == nil || err.Error() != want {
		t.Fatalf("go-jose v2 says %v, catalogue says %q", err, want)
	}
	// and the ECDSA path (wrong curve key) gives the same error
	err = parsed.Claims(tk.ecdsa.Public, &c)
	if err == nil || !strings.Contains(err.Error(), "error in cryptographic primitive") {
		t.Fatalf("go-jose v2 with an ECDSA key: %v", err)
	}
}

// TestVerifyCriticalMatchesGoJoseV2 signs tokens with a crit header through go-jose v2.6.3 (the
// module kube-apiserver's authenticator uses) and checks Verify's verdict and message against
// what that module's Claims really returns.
func TestVerifyCriticalMatchesGoJoseV2(t *testing.T) {
	tk := getTestKeys(t)
	priv := tk.rsa.Private.(*rsa.PrivateKey)
	claims := &jwtv2.Claims{Issuer: newIss, Subject: "system:serviceaccount:default:app", Audience: jwtv2.Audience{newIss},
		IssuedAt: jwtv2.NewNumericDate(t0), NotBefore: jwtv2.NewNumericDate(t0), Expiry: jwtv2.NewNumericDate(t0.Add(time.Hour))}
	private := &kubePrivateClaims{Kubernetes: kubeClaims{Namespace: "default", Svcacct: kubeRef{"app", "u"}}}
	tests := []struct {
		name string
		crit any
		// want is the 1.36 message; "" means accepted
		want string
		// old is the ≤1.32 message, when it differs
		old string
	}{
		{name: "unknown extension", crit: []string{"exp-unknown"}, want: "go-jose/go-jose: error in cryptographic primitive", old: "square/go-jose: error in cryptographic primitive"},
		{name: "b64 then unknown", crit: []string{"b64", "x"}, want: "go-jose/go-jose: error in cryptographic primitive", old: "square/go-jose: error in cryptographic primitive"},
		{name: "not a list", crit: "exp", want: "json: cannot unmarshal string into Go value of type []string"},
		{name: "not strings", crit: []int{1}, want: "json: cannot unmarshal number into Go value of type string"},
		{name: "b64 is understood", crit: []string{"b64"}},
		{name: "empty list", crit: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := (&josev2.SignerOptions{}).WithHeader("kid", tk.rsa.KeyID).WithHeader("crit", tt.crit)
			signer, err := josev2.NewSigner(josev2.SigningKey{Algorithm: josev2.RS256, Key: priv}, opts)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := jwtv2.Signed(signer).Claims(private).Claims(claims).CompactSerialize()
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := jwtv2.ParseSigned(raw)
			if err != nil {
				t.Fatal(err)
			}
			var c jwtv2.Claims
			goJose := ""
			if err := parsed.Claims(tk.rsa.Public, &c); err != nil {
				goJose = err.Error()
			}
			if goJose != tt.want {
				t.Fatalf("go-jose v2 says %q, the test expects %q", goJose, tt.want)
			}
			tok, err := Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range []string{"1.30", "1.36"} {
				d, err := Verify(tok, VerifyOptions{Keys: []keys.Key{tk.rsa, tk.ecdsa}, Issuers: []string{newIss}, At: t0, Version: kubever.MustParse(line)})
				if err != nil {
					t.Fatal(err)
				}
				want := tt.want
				if line == "1.30" && tt.old != "" {
					want = tt.old
				}
				if want == "" {
					if d.Verdict != Accepted {
						t.Errorf("%s: %s %s %q, want accepted", line, d.Verdict, d.Cause, d.Message)
					}
					continue
				}
				if d.Verdict != Rejected || d.Cause != "signing-key-unknown" || d.Message != want {
					t.Errorf("%s: %s %s %q, want rejected signing-key-unknown %q", line, d.Verdict, d.Cause, d.Message, want)
				}
			}
		})
	}
}
