// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"

	"github.com/credwatch/credwatch/pkg/report"
)

func b64s(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	hdr := b64s(`{"alg":"RS256","kid":"k"}`)
	pl := b64s(`{"iss":"x"}`)
	tests := []struct {
		name, token string
		kind        error
		want        string
	}{
		{"empty", "  \n", ErrNotJWT, "not a JWT: empty"},
		{"opaque", "abcdef.0123456789abcdef", ErrNotJWT, "not a JWT: 2 dot-separated parts, want 3 (header.payload.signature)"},
		{"json", `{"iss":"x"}`, ErrNotJWT, "not a JWT: JSON, not a compact JWS (header.payload.signature)"},
		{"jwe", "a.b.c.d.e", ErrNotJWT, "5 dot-separated parts: an encrypted JWE"},
		{"alg none", b64s(`{"alg":"none"}`) + "." + pl + ".", ErrAlgNone, `alg "none" (unsigned token) in header`},
		{"alg HS256", b64s(`{"alg":"HS256"}`) + "." + pl + ".c2ln", ErrUnsupportedAlg, `unsupported alg in header: "HS256"; kube-apiserver signs with RS256, ES256, ES384, ES512`},
		{"no alg", b64s(`{"kid":"k"}`) + "." + pl + ".c2ln", ErrUnsupportedAlg, "unsupported alg in header: no alg"},
		{"too large", strings.Repeat("a", 1<<20), ErrTooLarge, "token too large: 1048576 bytes, limit 65536"},
		{"bad base64 header", "!!!." + pl + ".c2ln", ErrInvalidBase64, "invalid base64url in header"},
		{"padded payload", hdr + "." + pl + "==.c2ln", ErrInvalidBase64, "invalid base64url in payload"},
		{"bad base64 signature", hdr + "." + pl + ".@@", ErrInvalidBase64, "invalid base64url in signature"},
		{"header not json", b64s("RS256") + "." + pl + ".c2ln", ErrInvalidJSON, "invalid JSON in header"},
		{"payload not object", hdr + "." + b64s(`["x"]`) + ".c2ln", ErrInvalidJSON, "invalid JSON in payload: not a JSON object"},
		{"payload truncated", hdr + "." + b64s(`{"iss":`) + ".c2ln", ErrInvalidJSON, "invalid JSON in payload"},
		{"duplicate header key", b64s(`{"alg":"RS256","alg":"none"}`) + "." + pl + ".c2ln", ErrDuplicateKey, `duplicate JSON key in header: "alg"`},
		{"duplicate claim", hdr + "." + b64s(`{"iss":"a","iss":"b"}`) + ".c2ln", ErrDuplicateKey, `duplicate JSON key in payload: "iss"`},
		{"nested duplicate", hdr + "." + b64s(`{"kubernetes.io":{"namespace":"a","namespace":"b"}}`) + ".c2ln", ErrDuplicateKey, `"namespace"`},
		{"exp string", hdr + "." + b64s(`{"exp":"soon"}`) + ".c2ln", ErrInvalidClaim, "invalid claim in payload: exp is not a number"},
		{"aud number", hdr + "." + b64s(`{"aud":3}`) + ".c2ln", ErrInvalidClaim, "aud is not a string or a list of strings"},
		{"no signature", hdr + "." + pl + ".", ErrNotJWT, "empty signature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Decode(tt.token)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("err %v, want %v", err, tt.kind)
			}
			var de *DecodeError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %q, want one line containing %q", err, tt.want)
			}
		})
	}
}

// TestMintLayout pins the exact header and claims layout kube-apiserver produces.
func TestMintLayout(t *testing.T) {
	tk := getTestKeys(t)
	o := podToken(tk.rsa, newIss, t0)
	o.ExpirationSeconds, o.Extend = WarnOnlyExpirationSeconds, true
	s := mustMint(t, o)
	p := strings.Split(s, ".")
	hdr, _ := base64.RawURLEncoding.DecodeString(p[0])
	pl, _ := base64.RawURLEncoding.DecodeString(p[1])
	if want := `{"alg":"RS256","kid":"JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU"}`; string(hdr) != want {
		t.Errorf("header %s, want %s", hdr, want)
	}
	want := `{"aud":["https://kubernetes.default.svc.cluster.local"],"exp":1827489600,"iat":1795953600,"iss":"https://kubernetes.default.svc.cluster.local","jti":"6d7f8a90-0000-4000-8000-000000000001","kubernetes.io":{"namespace":"default","node":{"name":"node-a","uid":"node-uid-1"},"pod":{"name":"web-0","uid":"pod-uid-1"},"serviceaccount":{"name":"app","uid":"sa-uid-1"},"warnafter":1795957207},"nbf":1795953600,"sub":"system:serviceaccount:default:app"}`
	if string(pl) != want {
		t.Errorf("claims\n got %s\nwant %s", pl, want)
	}
	l := mustMint(t, MintOptions{Key: tk.ecdsa, Legacy: true, LegacySecret: "app-token-x", Namespace: "default", ServiceAccount: Ref{Name: "app", UID: "u"}})
	pl, _ = base64.RawURLEncoding.DecodeString(strings.Split(l, ".")[1])
	if want := `{"iss":"kubernetes/serviceaccount","kubernetes.io/serviceaccount/namespace":"default","kubernetes.io/serviceaccount/secret.name":"app-token-x","kubernetes.io/serviceaccount/service-account.name":"app","kubernetes.io/serviceaccount/service-account.uid":"u","sub":"system:serviceaccount:default:app"}`; string(pl) != want {
		t.Errorf("legacy claims\n got %s\nwant %s", pl, want)
	}
}

// TestMintOmitNotBefore: the drill token the lab's clock-skew scenario signs is Mint's layout
// without nbf, and still verifies.
func TestMintOmitNotBefore(t *testing.T) {
	tk := getTestKeys(t)
	o := podToken(tk.rsa, newIss, t0)
	o.OmitNotBefore = true
	tok, err := Decode(mustMint(t, o))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Claims.NotBefore != nil || tok.Claims.IssuedAt == nil {
		t.Fatalf("nbf %v iat %v, want no nbf and an iat", tok.Claims.NotBefore, tok.Claims.IssuedAt)
	}
	if !verifySignature(tok, tk.rsa.Public) {
		t.Fatal("signature does not verify")
	}
}

// TestMintVerifiesWithGoJose checks Mint's JWS against an independent implementation.
func TestMintVerifiesWithGoJose(t *testing.T) {
	for _, path := range []string{"../keys/testdata/kubernetes/rsa.key", "../keys/testdata/kubernetes/ecdsa.key", "../keys/testdata/gen/ec384.key", "../keys/testdata/gen/ec521-pkcs8.key"} {
		k := loadKey(t, path)
		s := mustMint(t, podToken(k, newIss, t0))
		parsed, err := josejwt.ParseSigned(s, []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.ES384, jose.ES512})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var claims josejwt.Claims
		var priv map[string]json.RawMessage
		if err := parsed.Claims(k.Public, &claims, &priv); err != nil {
			t.Fatalf("%s: go-jose rejects the signature: %v", path, err)
		}
		if err := claims.ValidateWithLeeway(josejwt.Expected{Issuer: newIss, Time: t0.Add(time.Minute)}, time.Minute); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if parsed.Headers[0].KeyID != k.KeyID {
			t.Errorf("%s: kid %s want %s", path, parsed.Headers[0].KeyID, k.KeyID)
		}
	}
}

func TestClassifyAndRefresh(t *testing.T) {
	tk := getTestKeys(t)
	pod := podToken(tk.rsa, newIss, t0)
	ext := pod
	ext.ExpirationSeconds, ext.Extend = WarnOnlyExpirationSeconds, true
	long := pod
	long.ExpirationSeconds = 48 * 3600
	secret := pod
	secret.Pod, secret.Node, secret.Secret = nil, nil, &Ref{Name: "s", UID: "su"}
	node := pod
	node.Pod = nil
	tests := []struct {
		name      string
		o         MintOptions
		typ, to   string
		refresh   bool
		refreshAt time.Duration
		reason    string
		at        time.Duration
		stale     bool
	}{
		{"pod 1h", pod, TypeBound, "pod", true, 48 * time.Minute, "80% of lifetime", 10 * time.Minute, false},
		{"pod extended", ext, TypeBound, "pod", true, 2886 * time.Second, "80% of lifetime", 61 * time.Minute, true},
		{"pod 48h", long, TypeBound, "pod", true, 24 * time.Hour, "24h maximum age", time.Hour, false},
		{"secret", secret, TypeBound, "secret", false, 0, "", 0, false},
		{"node", node, TypeBound, "node", false, 0, "", 0, false},
		{"legacy", MintOptions{Key: tk.rsa, Legacy: true, LegacySecret: "s", Namespace: "n", ServiceAccount: Ref{Name: "a"}}, TypeLegacy, "", false, 0, "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, err := Decode(mustMint(t, tt.o))
			if err != nil {
				t.Fatal(err)
			}
			typ, b := tok.Classify()
			if typ != tt.typ || (b != nil && b.BoundTo != tt.to) {
				t.Fatalf("classify %s %+v", typ, b)
			}
			r, ok := tok.KubeletRefresh(t0.Add(tt.at))
			if ok != tt.refresh {
				t.Fatalf("refresh ok %v", ok)
			}
			if !ok {
				return
			}
			if !r.RefreshAt.Equal(t0.Add(tt.refreshAt)) || r.Reason != tt.reason || r.Stale != tt.stale {
				t.Errorf("refresh %+v", r)
			}
		})
	}
	other := handSigned(t, tk.rsa, map[string]any{"iss": "https://accounts.google.com", "sub": "1234", "aud": "client", "email": "a@b"})
	tok, err := Decode(other)
	if err != nil {
		t.Fatal(err)
	}
	if typ, _ := tok.Classify(); typ != TypeOther {
		t.Errorf("OIDC token classified %s", typ)
	}
}

func TestInspectTableEscapesControlCharacters(t *testing.T) {
	tk := getTestKeys(t)
	s := handSigned(t, tk.rsa, map[string]any{"iss": "evil\x1b[2J", "sub": "x\ny", "aud": []string{"a\x07"}})
	tok, err := Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Inspect(tok, "t", t0).WriteTable(&b, report.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07") || strings.Contains(b.String(), "x\ny") {
		t.Fatalf("control characters reach the terminal:\n%q", b.String())
	}
}
