// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/kubever"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/token"
)

// TestIntegrationLiveParity checks credwatch against real kube-apiserver processes of both lines:
// the kid and JWKS they publish, a TokenRequest token they mint, and, for tokens credwatch mints,
// that the line they log is the one token.Verify predicts. Run it under the lab lock:
// flock /tmp/credwatch-lab.lock go test -run TestIntegrationLiveParity ./pkg/token/
func TestIntegrationLiveParity(t *testing.T) {
	for _, version := range []string{lab.DefaultVersion, lab.OldVersion} {
		t.Run(version, func(t *testing.T) {
			l := labtest.Start(t, lab.Options{Members: 1, EtcdMembers: 1, Version: version})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			m := l.Members()[0]
			line := kubever.MustParse(version)
			shared, err := keys.LoadPEMFile(t.Context(), l.SharedSAKeyFile())
			if err != nil {
				t.Fatal(err)
			}
			cs, err := kubernetes.NewForConfig(l.MemberRESTConfig(m.Name))
			if err != nil {
				t.Fatal(err)
			}

			// 1. The JWKS the member serves is byte-identical to keys.JWKS of its key file.
			served, err := cs.CoreV1().RESTClient().Get().AbsPath("/openid/v1/jwks").DoRaw(ctx)
			if err != nil {
				t.Fatalf("GET /openid/v1/jwks: %v", err)
			}
			want, err := keys.JWKS(keys.Public(shared))
			if err != nil {
				t.Fatal(err)
			}
			if string(served) != string(want) {
				t.Errorf("served JWKS\n %s\ncredwatch keys jwks\n %s", served, want)
			}

			// 2. A TokenRequest token carries the kid credwatch derives and verifies as accepted.
			sa, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "credwatch-probe"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			exp := int64(3600)
			tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			live, err := token.Decode(tr.Status.Token)
			if err != nil {
				t.Fatal(err)
			}
			if live.Header.KeyID != shared[0].KeyID {
				t.Errorf("live token kid %s, credwatch keys id %s", live.Header.KeyID, shared[0].KeyID)
			}
			opts := token.VerifyOptions{Keys: keys.Public(shared), Issuers: m.Issuers, At: time.Now(), Version: line}
			d, err := token.Verify(live, opts)
			if err != nil || d.Verdict != token.Accepted {
				t.Fatalf("live token: %+v %v", d, err)
			}
			if typ, b := live.Classify(); typ != token.TypeBound || b.ServiceAccount.UID != string(sa.UID) {
				t.Errorf("classify %s %+v", typ, b)
			}

			// 3. Tokens credwatch mints are rejected with exactly the predicted log text.
			drift, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			driftKey, err := keys.NewKey(&drift.PublicKey, drift, "generated")
			if err != nil {
				t.Fatal(err)
			}
			base := token.MintOptions{Issuer: m.Issuers[0], Namespace: "default", ServiceAccount: token.Ref{Name: sa.Name, UID: string(sa.UID)}}
			cases := map[string]token.MintOptions{
				"drifted key": with(base, func(o *token.MintOptions) { o.Key = driftKey }),
				"no kid":      with(base, func(o *token.MintOptions) { o.Key, o.OmitKeyID = driftKey, true }),
				"old issuer":  with(base, func(o *token.MintOptions) { o.Key, o.Issuer = shared[0], "https://old.example.com" }),
				"expired":     with(base, func(o *token.MintOptions) { o.Key, o.IssuedAt = shared[0], time.Now().Add(-2*time.Hour) }),
				"clock ahead": with(base, func(o *token.MintOptions) { o.Key, o.IssuedAt = shared[0], time.Now().Add(5*time.Minute) }),
				"audience":    with(base, func(o *token.MintOptions) { o.Key, o.Audiences = shared[0], []string{"vault"} }),
				"legacy from a drifted key": with(base, func(o *token.MintOptions) {
					o.Key, o.Legacy, o.LegacySecret = driftKey, true, "credwatch-probe-token"
				}),
			}
			client := memberClient(t, l)
			for name, mo := range cases {
				s, err := token.Mint(mo)
				if err != nil {
					t.Fatal(err)
				}
				tok, _ := token.Decode(s)
				opts.At = time.Now()
				d, err := token.Verify(tok, opts)
				if err != nil || d.Verdict != token.Rejected {
					t.Fatalf("%s: predicted %+v %v", name, d, err)
				}
				if code := get(t, client, m.URL+"/api", s); code != http.StatusUnauthorized {
					t.Fatalf("%s: HTTP %d, want 401", name, code)
				}
				waitForLine(t, l, m.Name, d.LogSource+`] `+d.LogLine, name)
				t.Logf("%s: %s logged, as predicted: %s] %s", name, m.Name, d.LogSource, d.LogLine)
			}
		})
	}
}

func with(o token.MintOptions, f func(*token.MintOptions)) token.MintOptions {
	f(&o)
	return o
}

func memberClient(t *testing.T, l *lab.Lab) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(l.CA()) {
		t.Fatal("lab CA")
	}
	tlsc := l.TLSConfig()
	tlsc.Certificates = nil // present only the bearer token
	tlsc.RootCAs = pool
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsc}}
}

func get(t *testing.T, c *http.Client, url, bearer string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitForLine waits until the member's log has a line ending with want (klog header aside).
func waitForLine(t *testing.T, l *lab.Lab, member, want, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		lines, err := l.AuthLines(member)
		if err != nil {
			t.Fatal(err)
		}
		for _, ln := range lines {
			if strings.HasSuffix(ln, want) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no log line ending in\n  %s\nin\n  %s", what, want, strings.Join(lines, "\n  "))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
