// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package keys_test

import (
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/cmd/keys"
	"github.com/credwatch/credwatch/internal/cmdtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

const kd = "../../../pkg/keys/testdata"

// kube-apiserver's own test vectors (pkg/serviceaccount/jwt_test.go rsaKeyID, ecdsaKeyID).
const (
	kubeRSAKeyID   = "JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU"
	kubeECDSAKeyID = "SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc"
)

func TestKeysIDPrintsKubeKeyIDs(t *testing.T) {
	r := cmdtest.Run(t, keys.NewCommand, nil, "id", kd+"/kubernetes/rsa.key", kd+"/kubernetes/ecdsa.pub", "-o", "json")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"kid": "`+kubeRSAKeyID+`"`) || !strings.Contains(r.Stdout, `"kid": "`+kubeECDSAKeyID+`"`) {
		t.Fatalf("exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestGolden(t *testing.T) {
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared.jwks")
	r := cmdtest.Run(t, keys.NewCommand, nil, "jwks", kd+"/kubernetes/rsa.pub", kd+"/kubernetes/ecdsa.pub")
	if r.Code != 0 {
		t.Fatal(r.Stderr)
	}
	if err := os.WriteFile(shared, []byte(r.Stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case "/openid/v1/jwks":
			w.Header().Set("Content-Type", "application/jwk-set+json")
			_, _ = w.Write([]byte(r.Stdout))
		case "/.well-known/openid-configuration":
			_, _ = w.Write([]byte(`{"issuer":"https://kubernetes.default.svc","jwks_uri":"http://` + req.Host + `/openid/v1/jwks"}`))
		default:
			http.NotFound(w, req)
		}
	}))
	defer srv.Close()

	tests := []struct {
		name string
		args []string
		code int
		// url-dependent output is not golden
		golden bool
	}{
		{"id", []string{"id", kd + "/kubernetes/rsa.pub", kd + "/kubernetes/ecdsa.key", kd + "/gen/ec384.pub", kd + "/gen/ec521-pkcs8.key", kd + "/gen/rsa-cert.pem"}, 0, true},
		{"jwks", []string{"jwks", kd + "/kubernetes/rsa.pub", kd + "/kubernetes/ecdsa.key", kd + "/gen/ec384.pub"}, 0, true},
		{"diff-equal", []string{"diff", kd + "/kubernetes/rsa.key", kd + "/kubernetes/rsa.pub"}, 0, true},
		{"diff-drift", []string{"diff", kd + "/kubernetes/rsa.pub", kd + "/gen/rsa-drift.pub"}, 1, true},
		{"diff-issuer-url", []string{"diff", kd + "/kubernetes/rsa.pub", srv.URL}, 1, false},
		{"diff-jwks-file", []string{"diff", shared, kd + "/kubernetes/ecdsa.key"}, 1, false},
	}
	for _, tt := range tests {
		for _, format := range []string{"table", "json", "yaml"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				r := cmdtest.Run(t, keys.NewCommand, nil, append(tt.args, "-o", format)...)
				if r.Code != tt.code {
					t.Fatalf("exit %d, want %d; stderr %s", r.Code, tt.code, r.Stderr)
				}
				if strings.Contains(r.Stdout, `"d"`) || strings.Contains(r.Stdout, "PRIVATE KEY") {
					t.Fatal("private key material in output")
				}
				if !tt.golden {
					if !strings.Contains(r.Stdout, kubeRSAKeyID) {
						t.Errorf("output lacks the shared kid:\n%s", r.Stdout)
					}
					return
				}
				ext := map[string]string{"table": "txt", "json": "json", "yaml": "yaml"}[format]
				cmdtest.Golden(t, filepath.Join("testdata", "golden", tt.name+"."+ext), r.Stdout, *update)
			})
		}
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	html := cmdtest.HTMLServer(t)
	slow := cmdtest.HangingServer(t)
	badJWKS := filepath.Join(dir, "bad.jwks")
	if err := os.WriteFile(badJWKS, []byte(`{"keys":[],"keys":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"PEM without key", []string{"id", kd + "/gen/nokey.pem"}, "nokey.pem: no RSA or ECDSA key found"},
		{"missing file", []string{"jwks", filepath.Join(dir, "nope.pem")}, "nope.pem: no such file or directory"},
		{"duplicate JWKS key", []string{"diff", badJWKS, kd + "/kubernetes/rsa.pub"}, `duplicate JSON key "keys"`},
		{"URL returns HTML", []string{"diff", kd + "/kubernetes/rsa.pub", html.URL + "/openid/v1/jwks"}, html.URL + "/openid/v1/jwks: got text/html, not a JWKS or OpenID discovery document"},
		{"URL times out", []string{"diff", kd + "/kubernetes/rsa.pub", slow.URL, "--fetch-timeout", "200ms"}, slow.URL + ": timed out"},
		{"no args", []string{"diff", kd + "/kubernetes/rsa.pub"}, "accepts 2 arg(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cmdtest.Run(t, keys.NewCommand, nil, tt.args...)
			if r.Code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", r.Code, r.Stderr)
			}
			if strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, tt.want) {
				t.Fatalf("stderr %q, want one line containing %q", r.Stderr, tt.want)
			}
		})
	}
}
