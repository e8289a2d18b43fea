// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package keys_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/keys"
)

// kube-apiserver's own test vectors (pkg/serviceaccount/jwt_test.go rsaKeyID, ecdsaKeyID).
const (
	kubeRSAKeyID   = "JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU"
	kubeECDSAKeyID = "SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc"
)

func TestKeyIDMatchesKubeAPIServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, kid, alg string
		private        bool
	}{
		{"testdata/kubernetes/rsa.pub", kubeRSAKeyID, "RS256", false},
		{"testdata/kubernetes/rsa.key", kubeRSAKeyID, "RS256", true},
		{"testdata/kubernetes/ecdsa.pub", kubeECDSAKeyID, "ES256", false},
		{"testdata/kubernetes/ecdsa.key", kubeECDSAKeyID, "ES256", true},
		{"testdata/gen/rsa-cert.pem", kubeRSAKeyID, "RS256", false},
		{"testdata/gen/ec384.key", "", "ES384", true},
		{"testdata/gen/ec521-pkcs8.key", "", "ES512", true},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			t.Parallel()
			ks, err := keys.LoadPEMFile(t.Context(), tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if len(ks) != 1 {
				t.Fatalf("got %d keys, want 1", len(ks))
			}
			k := ks[0]
			if tt.kid != "" && k.KeyID != tt.kid {
				t.Errorf("kid %q, want %q", k.KeyID, tt.kid)
			}
			if k.Algorithm != tt.alg {
				t.Errorf("alg %q, want %q", k.Algorithm, tt.alg)
			}
			if (k.Private != nil) != tt.private {
				t.Errorf("private %v, want %v", k.Private != nil, tt.private)
			}
		})
	}
}

func TestPublicAndPrivateHalvesShareKeyID(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{{"testdata/gen/ec384.key", "testdata/gen/ec384.pub"}, {"testdata/gen/rsa-drift.key", "testdata/gen/rsa-drift.pub"}} {
		a, err1 := keys.LoadPEMFile(t.Context(), pair[0])
		b, err2 := keys.LoadPEMFile(t.Context(), pair[1])
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if a[0].KeyID != b[0].KeyID {
			t.Errorf("%s kid %s != %s kid %s", pair[0], a[0].KeyID, pair[1], b[0].KeyID)
		}
	}
}

func TestSeveralKeysPerFile(t *testing.T) {
	t.Parallel()
	var data []byte
	for _, f := range []string{"testdata/kubernetes/rsa.pub", "testdata/gen/nokey.pem", "testdata/kubernetes/ecdsa.key", "testdata/gen/ed25519.key"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, b...)
	}
	ks, err := keys.ParsePEM(data, "combined.pem")
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 2 || ks[0].KeyID != kubeRSAKeyID || ks[1].KeyID != kubeECDSAKeyID {
		t.Fatalf("got %+v", ks)
	}
}

func TestPEMErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	unreadable := filepath.Join(dir, "unreadable.pem")
	if err := os.WriteFile(unreadable, []byte("x"), 0o000); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file, want string
	}{
		{"no key", "testdata/gen/nokey.pem", "testdata/gen/nokey.pem: no RSA or ECDSA key found"},
		{"ed25519 only", "testdata/gen/ed25519.key", "testdata/gen/ed25519.key: no RSA or ECDSA key found"},
		{"missing", filepath.Join(dir, "missing.pem"), "missing.pem: no such file or directory"},
		{"directory", dir, "is a directory"},
	}
	if os.Geteuid() != 0 {
		tests = append(tests, struct{ name, file, want string }{"unreadable", unreadable, "permission denied"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := keys.LoadPEMFile(t.Context(), tt.file)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v, want one line containing %q", err, tt.want)
			}
		})
	}
	if _, err := keys.ParsePEM([]byte("nothing"), "x"); !errors.Is(err, keys.ErrNoKey) {
		t.Errorf("err %v, want ErrNoKey", err)
	}
}

func kubeKeys(t testing.TB) []keys.Key {
	t.Helper()
	a, err := keys.LoadPEMFile(t.Context(), "testdata/kubernetes/rsa.pub")
	if err != nil {
		t.Fatal(err)
	}
	b, err := keys.LoadPEMFile(t.Context(), "testdata/kubernetes/ecdsa.pub")
	if err != nil {
		t.Fatal(err)
	}
	return append(a, b...)
}

func TestJWKSRoundTrip(t *testing.T) {
	t.Parallel()
	ks := kubeKeys(t)
	doc, err := keys.JWKS(ks)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"keys":[{"use":"sig","kty":"RSA","kid":"` + kubeRSAKeyID + `","alg":"RS256","n":"249XwEo9k4tM8fMxV7zxOhcrP-WvXn917koM5Qr2ZXs4vo26e4ytdlrV0bQ9SlcLpQVSYjIxNfhTZdDt-ecIzshKuv1gKIxbbLQMOuK1eA_4HALyEkFgmS_tleLJrhc65tKPMGD-pKQ_xhmzRuCG51RoiMgbQxaCyYxGfNLpLAZK9L0Tctv9a0mJmGIYnIOQM4kC1A1I1n3EsXMWmeJUj7OTh_AjjCnMnkgvKT2tpKxYQ59PgDgU8Ssc7RDSmSkLxnrv-OrN80j6xrw0OjEiB4Ycr0PqfzZcvy8efTtFQ_Jnc4Bp1zUtFXt7-QeevePtQ2EcyELXE0i63T1CujRMWw","e":"AQAB"},{"use":"sig","kty":"EC","kid":"` + kubeECDSAKeyID + `","crv":"P-256","alg":"ES256","x":"H6cuzP8XuD5wal6wf9M6xDljTOPLX2i8uIp_C_ASqiI","y":"BlHnikLV9PyEd6gl8k4T_3Wwoh6xd79XLoQTh2PAi1Y"}]}`
	if string(doc) != want {
		t.Errorf("JWKS\n got %s\nwant %s", doc, want)
	}
	back, err := keys.ParseJWKS(doc, "doc")
	if err != nil {
		t.Fatal(err)
	}
	if d := keys.Compare(ks, back); !d.Equal() || len(d.Both) != 2 {
		t.Errorf("round trip differs: %+v", d)
	}
}

func TestParseJWKSRejects(t *testing.T) {
	t.Parallel()
	tests := map[string]struct{ doc, want string }{
		"not json":      {`<html>`, "not a JWKS document: invalid JSON"},
		"no keys":       {`{"issuer":"x"}`, `no "keys" array`},
		"keys not list": {`{"keys":{}}`, "not a JWKS document"},
		"duplicate":     {`{"keys":[],"keys":[]}`, `duplicate JSON key "keys"`},
		"trailing":      {`{"keys":[]} {}`, "data after the top-level value"},
		"bad key":       {`{"keys":[{"kty":"RSA","n":"!!"}]}`, "key #0"},
		"entry string":  {`{"keys":["x"]}`, "key #0: not a JSON object"},
		"symmetric":     {`{"keys":[{"kty":"oct","k":"AAAA"}]}`, "key #0"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := keys.ParseJWKS([]byte(tt.doc), "in.json")
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "in.json: ") {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	shared := kubeKeys(t)
	drift, err := keys.LoadPEMFile(t.Context(), "testdata/gen/rsa-drift.pub")
	if err != nil {
		t.Fatal(err)
	}
	relabeled := shared[1]
	relabeled.KeyID = "custom"
	forged := drift[0]
	forged.KeyID = shared[0].KeyID
	d := keys.Compare(append([]keys.Key{shared[0], shared[1]}, shared[0]), []keys.Key{shared[0], drift[0]})
	if len(d.Both) != 1 || len(d.OnlyLeft) != 1 || len(d.OnlyRight) != 1 || d.Equal() {
		t.Errorf("drift diff %+v", d)
	}
	d = keys.Compare([]keys.Key{shared[0], shared[1]}, []keys.Key{forged, relabeled})
	if len(d.Conflicts) != 1 || len(d.Relabeled) != 1 || len(d.Both) != 0 {
		t.Errorf("conflict diff %+v", d)
	}
}

func TestLoadSources(t *testing.T) {
	t.Parallel()
	jwks, err := keys.JWKS(kubeKeys(t))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	var srvURL string
	mux.HandleFunc("/openid/v1/jwks", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_, _ = w.Write(jwks)
	})
	mux.HandleFunc("/issuer/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"issuer":"` + srvURL + `/issuer","jwks_uri":"` + srvURL + `/openid/v1/jwks"}`))
	})
	mux.HandleFunc("/html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><body>login</body></html>"))
	})
	block := make(chan struct{})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(block)
	srvURL = srv.URL
	o := keys.FetchOptions{Timeout: 300 * time.Millisecond}

	tests := []struct {
		name, spec, kind, wantErr string
	}{
		{"pem", "testdata/kubernetes/rsa.pub", keys.KindPEM, ""},
		{"jwks url", srv.URL + "/openid/v1/jwks", keys.KindJWKSURL, ""},
		{"issuer", srv.URL + "/issuer", keys.KindDiscovery, ""},
		{"discovery url", srv.URL + "/issuer/.well-known/openid-configuration", keys.KindDiscovery, ""},
		{"html", srv.URL + "/html", "", srv.URL + "/html: got text/html, not a JWKS or OpenID discovery document"},
		{"timeout", srv.URL + "/slow", "", srv.URL + "/slow: timed out"},
		{"404", srv.URL + "/nothing", "", "HTTP 404 Not Found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := keys.Load(context.Background(), tt.spec, o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err %v, want one line containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Kind != tt.kind || len(s.Keys) == 0 {
				t.Errorf("kind %s keys %d", s.Kind, len(s.Keys))
			}
		})
	}
}
