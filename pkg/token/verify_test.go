// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/kubever"
)

const (
	newIss = "https://kubernetes.default.svc.cluster.local"
	oldIss = "https://old.example.com"
)

// tamper replaces the payload of a signed token, keeping header and signature.
func tamper(t *testing.T, tok string) string {
	t.Helper()
	p := strings.Split(tok, ".")
	p[1] = base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"` + newIss + `","sub":"system:serviceaccount:default:admin","aud":["` + newIss + `"]}`))
	return strings.Join(p, ".")
}

// handSigned signs arbitrary claims (for claim layouts kube-apiserver never mints).
func handSigned(t *testing.T, k keys.Key, claims map[string]any) string {
	t.Helper()
	s, err := sign(k, claims, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type verifyCase struct {
	name    string
	token   string
	opts    VerifyOptions
	verdict string
	cause   string
	// message per line; "*" applies to every line not listed.
	message map[string]string
	need    string // substring of NeedsCluster
	note    string // substring of Notes
}

func TestVerify(t *testing.T) {
	tk := getTestKeys(t)
	for _, alg := range []struct {
		name string
		key  keys.Key
	}{{"RSA", tk.rsa}, {"ECDSA", tk.ecdsa}, {"ECDSA-P384", tk.ec384}} {
		k := alg.key
		shared := []keys.Key{tk.rsa, tk.ecdsa, tk.ec384}
		drifted := podToken(tk.drift, newIss, t0)
		if alg.name != "RSA" {
			drifted.Key = loadKey(t, "../keys/testdata/kubernetes/ecdsa.key")
		}
		base := VerifyOptions{Keys: shared, Issuers: []string{newIss}, At: t0.Add(10 * time.Minute)}
		with := func(f func(*VerifyOptions)) VerifyOptions { o := base; f(&o); return o }
		crypto := map[string]string{"1.26": "square/go-jose: error in cryptographic primitive", "1.30": "square/go-jose: error in cryptographic primitive", "1.32": "square/go-jose: error in cryptographic primitive", "*": "go-jose/go-jose: error in cryptographic primitive"}
		noKeys := map[string]string{"1.26": "square/go-jose: error in cryptographic primitive", "1.30": "square/go-jose: error in cryptographic primitive", "*": "invalid signature, no keys found"}

		legacy := MintOptions{Key: k, Legacy: true, LegacySecret: "app-token-x7k2p", Namespace: "default", ServiceAccount: Ref{Name: "app", UID: "sa-uid-1"}}
		extended := podToken(k, newIss, t0)
		extended.ExpirationSeconds, extended.Extend = WarnOnlyExpirationSeconds, true
		short := podToken(k, newIss, t0)
		short.ExpirationSeconds = 600
		oldAud := podToken(k, oldIss, t0)
		noKID := podToken(k, newIss, t0)
		noKID.OmitKeyID = true

		cases := []verifyCase{
			{name: "accepted pod-bound", token: mustMint(t, podToken(k, newIss, t0)), opts: base, verdict: Accepted,
				need: "pod default/web-0 must exist with UID pod-uid-1"},
			{name: "unknown signing key (drifted member)", token: mustMint(t, drifted), opts: with(func(o *VerifyOptions) {
				o.Keys = []keys.Key{tk.rsa, tk.ec384}
				if alg.name != "RSA" {
					o.Keys = []keys.Key{tk.drift, tk.ec384}
				}
			}), verdict: Rejected, cause: "signing-key-unknown", message: noKeys},
			{name: "unknown key without kid tries all keys", token: mustMint(t, noKID), opts: with(func(o *VerifyOptions) { o.Keys = []keys.Key{tk.drift} }),
				verdict: Rejected, cause: "signing-key-unknown", message: crypto},
			{name: "kid matches but signature does not", token: tamper(t, mustMint(t, podToken(k, newIss, t0))), opts: base,
				verdict: Rejected, cause: "signing-key-unknown", message: crypto},
			{name: "old issuer not accepted", token: mustMint(t, podToken(k, oldIss, t0)), opts: base,
				verdict: Rejected, cause: "issuer-not-accepted", message: map[string]string{"*": ""}},
			{name: "old issuer kept, old audience dropped", token: mustMint(t, oldAud), opts: with(func(o *VerifyOptions) {
				o.Issuers = []string{newIss, oldIss}
				o.APIAudiences = []string{newIss}
			}), verdict: Rejected, cause: "audience-mismatch",
				message: map[string]string{"*": `token audiences ["https://old.example.com"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]`}},
			{name: "old issuer kept, audiences default to issuers", token: mustMint(t, oldAud), opts: with(func(o *VerifyOptions) { o.Issuers = []string{newIss, oldIss} }),
				verdict: Accepted},
			{name: "expired beyond leeway", token: mustMint(t, short), opts: with(func(o *VerifyOptions) { o.At = t0.Add(661 * time.Second) }),
				verdict: Rejected, cause: "token-expired", message: map[string]string{"*": "service account token has expired"}},
			{name: "expired within leeway", token: mustMint(t, short), opts: with(func(o *VerifyOptions) { o.At = t0.Add(660 * time.Second) }),
				verdict: Accepted},
			{name: "not valid yet beyond leeway", token: mustMint(t, podToken(k, newIss, t0)), opts: with(func(o *VerifyOptions) { o.At = t0.Add(-61 * time.Second) }),
				verdict: Rejected, cause: "token-not-yet-valid", message: map[string]string{"*": "service account token is not valid yet"}},
			{name: "not valid yet within leeway", token: mustMint(t, podToken(k, newIss, t0)), opts: with(func(o *VerifyOptions) { o.At = t0.Add(-60 * time.Second) }),
				verdict: Accepted},
			{name: "issued in the future", token: handSigned(t, k, map[string]any{"iss": newIss, "sub": "system:serviceaccount:default:app", "aud": []string{newIss},
				"iat": t0.Add(5 * time.Minute).Unix(), "nbf": t0.Unix(), "exp": t0.Add(time.Hour).Unix(),
				"kubernetes.io": map[string]any{"namespace": "default", "serviceaccount": map[string]any{"name": "app", "uid": "u"}}}),
				opts: with(func(o *VerifyOptions) { o.At = t0 }), verdict: Rejected, cause: "token-not-yet-valid",
				message: map[string]string{"1.26": "service account token claims could not be validated due to unexpected validation error", "*": "service account token is issued in the future"}},
			{name: "extended token used after warnafter", token: mustMint(t, extended), opts: with(func(o *VerifyOptions) { o.At = t0.Add(2 * time.Hour) }),
				verdict: Accepted, note: "stale: used 59m53s after warnafter"},
			{name: "legacy accepted offline", token: mustMint(t, legacy), opts: base, verdict: Accepted,
				need: "secret default/app-token-x7k2p must exist"},
			{name: "legacy from drifted KCM key", token: mustMint(t, MintOptions{Key: tk.drift, Legacy: true, LegacySecret: "s", Namespace: "default", ServiceAccount: Ref{Name: "app", UID: "u"}}),
				opts: base, verdict: Rejected, cause: "signing-key-unknown", message: noKeys},
			{name: "legacy secret claim missing", token: handSigned(t, k, map[string]any{"iss": LegacyIssuer, "sub": "system:serviceaccount:default:app",
				"kubernetes.io/serviceaccount/namespace": "default", "kubernetes.io/serviceaccount/service-account.name": "app", "kubernetes.io/serviceaccount/service-account.uid": "u"}),
				opts: base, verdict: Rejected, cause: "token-claims-invalid", message: map[string]string{"*": "secretName claim is missing"}},
			{name: "legacy sub invalid", token: handSigned(t, k, map[string]any{"iss": LegacyIssuer, "sub": "system:serviceaccount:other:app",
				"kubernetes.io/serviceaccount/namespace": "default", "kubernetes.io/serviceaccount/secret.name": "s",
				"kubernetes.io/serviceaccount/service-account.name": "app", "kubernetes.io/serviceaccount/service-account.uid": "u"}),
				opts: base, verdict: Rejected, cause: "token-claims-invalid", message: map[string]string{"*": "sub claim is invalid"}},
			{name: "OIDC-shaped token under an accepted issuer", token: handSigned(t, k, map[string]any{"iss": newIss, "sub": "1234", "aud": newIss,
				"iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix()}), opts: base, verdict: Rejected, cause: "token-claims-invalid",
				message: map[string]string{"*": "resource name may not be empty"}},
			// A token without aud gets the implicit API audiences, so it never fails the audience check.
			{name: "legacy token gets the implicit API audiences", token: mustMint(t, legacy), opts: with(func(o *VerifyOptions) { o.APIAudiences = []string{"vault"} }),
				verdict: Accepted, note: "no aud claim"},
		}

		for _, tc := range cases {
			for _, line := range []string{"1.26", "1.30", "1.32", "1.33", "1.36"} {
				t.Run(alg.name+"/"+tc.name+"/"+line, func(t *testing.T) {
					tok, err := Decode(tc.token)
					if err != nil {
						t.Fatal(err)
					}
					o := tc.opts
					o.Version = kubever.MustParse(line)
					d, err := Verify(tok, o)
					if err != nil {
						t.Fatal(err)
					}
					if d.Verdict != tc.verdict || d.Cause != tc.cause {
						t.Fatalf("verdict %s/%s, want %s/%s; steps %+v", d.Verdict, d.Cause, tc.verdict, tc.cause, d.Steps)
					}
					if tc.message != nil {
						want, ok := tc.message[line]
						if !ok {
							want = tc.message["*"]
						}
						if d.Message != want {
							t.Errorf("message %q, want %q", d.Message, want)
						}
						wantLog := `"Unable to authenticate the request" err="invalid bearer token"`
						if want != "" {
							wantLog = `"Unable to authenticate the request" err="[invalid bearer token, ` + strings.ReplaceAll(want, `"`, `\"`) + `]"`
						}
						if d.LogLine != wantLog {
							t.Errorf("logLine %s, want %s", d.LogLine, wantLog)
						}
					}
					if tc.need != "" && !strings.Contains(strings.Join(d.NeedsCluster, "\n"), tc.need) {
						t.Errorf("needsCluster %q lacks %q", d.NeedsCluster, tc.need)
					}
					if tc.note != "" && !strings.Contains(strings.Join(d.Notes, "\n"), tc.note) {
						t.Errorf("notes %q lack %q", d.Notes, tc.note)
					}
				})
			}
		}
	}
}

func TestLogLineByVersion(t *testing.T) {
	t.Parallel()
	tests := []struct{ line, msg, want, src string }{
		{"1.20", "service account token has expired", "Unable to authenticate the request due to an error: [invalid bearer token, service account token has expired]", "authentication.go:53"},
		{"1.24", "", `"Unable to authenticate the request" err="invalid bearer token"`, "authentication.go:70"},
		{"1.30", "x", `"Unable to authenticate the request" err="[invalid bearer token, x]"`, "authentication.go:73"},
		{"1.32", "x", `"Unable to authenticate the request" err="[invalid bearer token, x]"`, "authentication.go:74"},
		{"1.36", "x", `"Unable to authenticate the request" err="[invalid bearer token, x]"`, "authentication.go:75"},
	}
	for _, tt := range tests {
		got, src := LogLine(kubever.MustParse(tt.line), tt.msg)
		if got != tt.want || src != tt.src {
			t.Errorf("%s: got %s @%s, want %s @%s", tt.line, got, src, tt.want, tt.src)
		}
	}
}

func TestVerifyNeedsConfig(t *testing.T) {
	t.Parallel()
	tk := getTestKeys(t)
	tok, err := Decode(mustMint(t, podToken(tk.rsa, newIss, t0)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(tok, VerifyOptions{Keys: []keys.Key{tk.rsa}}); err != ErrNoIssuer {
		t.Errorf("err %v, want ErrNoIssuer", err)
	}
	if _, err := Verify(tok, VerifyOptions{Issuers: []string{newIss}}); err != ErrNoKeys {
		t.Errorf("err %v, want ErrNoKeys", err)
	}
}

// TestVerifyUsesDerivedKeyID: kube-apiserver indexes keys by the kid it derives, so a JWKS that
// labels the same key differently still verifies.
func TestVerifyUsesDerivedKeyID(t *testing.T) {
	tk := getTestKeys(t)
	relabeled := tk.rsa
	relabeled.KeyID, relabeled.Private = "custom-label", nil
	tok, err := Decode(mustMint(t, podToken(tk.rsa, newIss, t0)))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Verify(tok, VerifyOptions{Keys: []keys.Key{relabeled}, Issuers: []string{newIss}, At: t0, Version: kubever.Newest})
	if err != nil || d.Verdict != Accepted {
		t.Fatalf("%+v %v", d, err)
	}
}
