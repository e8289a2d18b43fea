// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token_test

import (
	"encoding/base64"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/cmd/token"
	"github.com/credwatch/credwatch/internal/cmdtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

const (
	keyDir = "../../../pkg/keys/testdata"
	iss    = "https://kubernetes.default.svc.cluster.local"
	at     = "2026-11-29T12:10:00Z"
)

func TestGolden(t *testing.T) {
	shared := []string{"--key", keyDir + "/kubernetes/rsa.pub", "--key", keyDir + "/kubernetes/ecdsa.pub"}
	verify := func(tok string, extra ...string) []string {
		a := append([]string{"verify", "testdata/" + tok, "--issuer", iss, "--at", at}, shared...)
		return append(a, extra...)
	}
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"inspect-pod", []string{"inspect", "testdata/pod.jwt", "--at", at}, 0},
		{"inspect-sa-dir", []string{"inspect", "testdata/sa", "--at", at}, 0},
		{"inspect-extended-stale", []string{"inspect", "testdata/extended.jwt", "--at", "2026-11-29T13:30:00Z"}, 0},
		{"inspect-legacy", []string{"inspect", "testdata/legacy.jwt", "--at", at}, 0},
		{"inspect-secret-expired", []string{"inspect", "testdata/secret-short.jwt", "--at", "2026-11-29T12:30:00Z"}, 0},
		{"inspect-oidc", []string{"inspect", "testdata/oidc.jwt", "--at", at}, 0},
		{"verify-accepted", verify("pod.jwt"), 0},
		{"verify-drift-1.36", verify("drift.jwt"), 1},
		{"verify-drift-1.30", verify("drift.jwt", "--kube-version", "1.30"), 1},
		{"verify-drift-1.33", verify("drift.jwt", "--kube-version", "v1.33.1"), 1},
		{"verify-nokid-1.32", verify("nokid.jwt", "--kube-version", "1.32"), 1},
		{"verify-nokid-1.33", verify("nokid.jwt", "--kube-version", "1.33"), 1},
		{"verify-old-issuer", verify("oldissuer.jwt"), 1},
		{"verify-old-issuer-audience", verify("oldissuer.jwt", "--issuer", "https://old.example.com", "--audience", iss), 1},
		{"verify-expired", verify("secret-short.jwt", "--at", "2026-11-29T12:11:01Z"), 1},
		{"verify-not-yet-valid", verify("pod.jwt", "--at", "2026-11-29T11:58:59Z"), 1},
		{"verify-legacy", verify("legacy.jwt"), 0},
		{"verify-extended-stale", verify("extended.jwt", "--at", "2026-11-29T13:30:00Z"), 0},
	}
	for _, tt := range tests {
		for _, format := range []string{"table", "json", "yaml"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				r := cmdtest.Run(t, token.NewCommand, nil, append(tt.args, "-o", format)...)
				if r.Code != tt.code {
					t.Fatalf("exit %d, want %d; stderr %s", r.Code, tt.code, r.Stderr)
				}
				ext := map[string]string{"table": "txt", "json": "json", "yaml": "yaml"}[format]
				cmdtest.Golden(t, filepath.Join("testdata", "golden", tt.name+"."+ext), r.Stdout, *update)
				assertNoSignature(t, r.Stdout)
			})
		}
	}
}

// assertNoSignature fails if any test token's signature appears in out.
func assertNoSignature(t *testing.T, out string) {
	t.Helper()
	files, _ := filepath.Glob("testdata/*.jwt")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(strings.TrimSpace(string(b)), ".")
		if len(parts) == 3 && len(parts[2]) > 8 && strings.Contains(out, parts[2]) {
			t.Fatalf("output contains the signature of %s", f)
		}
	}
}

func TestStdinAndMintRoundTrip(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.jwt")
	r := cmdtest.Run(t, token.NewCommand, nil, "mint", "--key", keyDir+"/kubernetes/ecdsa.key", "--issuer", iss,
		"--pod", "web-0:u1", "--iat", "-2m", "--out", out, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("mint: %d %s", r.Code, r.Stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	r = cmdtest.Run(t, token.NewCommand, strings.NewReader(string(b)), "verify", "-", "--key", keyDir+"/kubernetes/ecdsa.pub", "--issuer", iss)
	if r.Code != 0 || !strings.Contains(r.Stdout, "ACCEPTED") || !strings.Contains(r.Stdout, "pod default/web-0 must exist with UID u1") {
		t.Fatalf("verify: %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = cmdtest.Run(t, token.NewCommand, nil, "mint", "--key", keyDir+"/kubernetes/rsa.key", "--issuer", iss, "--out", "-")
	if r.Code != 0 || strings.Count(r.Stdout, ".") != 2 {
		t.Fatalf("mint --out -: %d %q", r.Code, r.Stdout)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	pl := b64(`{"iss":"` + iss + `"}`)
	html := cmdtest.HTMLServer(t)
	slow := cmdtest.HangingServer(t)

	unreadable := write("unreadable.jwt", "x", 0o000)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"not a JWT", []string{"inspect", write("opaque", "abcdef0123456789", 0o644)}, "not a JWT: 1 dot-separated parts"},
		{"alg none", []string{"inspect", write("none", b64(`{"alg":"none"}`)+"."+pl+".", 0o644)}, `alg "none"`},
		{"unsupported alg", []string{"inspect", write("hs", b64(`{"alg":"HS256"}`)+"."+pl+".c2ln", 0o644)}, `unsupported alg in header: "HS256"`},
		{"1 MB token", []string{"inspect", write("big", strings.Repeat("A", 1<<20), 0o644)}, "token too large"},
		{"invalid base64", []string{"inspect", write("b64", "e30.%%%.c2ln", 0o644)}, "invalid base64url in payload"},
		{"invalid JSON", []string{"inspect", write("json", b64(`{"alg":"RS256"`)+"."+pl+".c2ln", 0o644)}, "invalid JSON in header"},
		{"duplicate keys", []string{"inspect", write("dup", b64(`{"alg":"RS256"}`)+"."+b64(`{"iss":"a","iss":"b"}`)+".c2ln", 0o644)}, `duplicate JSON key in payload: "iss"`},
		{"missing file", []string{"inspect", filepath.Join(dir, "nope")}, "no such file or directory"},
		{"empty sa dir", []string{"inspect", dir + "/"}, "token: no such file or directory"},
		{"PEM without key", []string{"verify", "testdata/pod.jwt", "--issuer", iss, "--key", keyDir + "/gen/nokey.pem"}, "nokey.pem: no RSA or ECDSA key found"},
		{"JWKS URL returns HTML", []string{"verify", "testdata/pod.jwt", "--issuer", iss, "--jwks", html.URL}, html.URL + ": got text/html, not a JWKS"},
		{"JWKS URL times out", []string{"verify", "testdata/pod.jwt", "--issuer", iss, "--jwks", slow.URL + "/jwks", "--fetch-timeout", "200ms"}, slow.URL + "/jwks: timed out"},
		{"no issuer", []string{"verify", "testdata/pod.jwt", "--key", keyDir + "/kubernetes/rsa.pub"}, "--issuer is required"},
		{"bad kube version", []string{"verify", "testdata/pod.jwt", "--issuer", iss, "--key", keyDir + "/kubernetes/rsa.pub", "--kube-version", "2.0"}, "--kube-version"},
		{"bad time", []string{"verify", "testdata/pod.jwt", "--issuer", iss, "--key", keyDir + "/kubernetes/rsa.pub", "--at", "yesterday"}, "--at: time \"yesterday\""},
		{"mint public key", []string{"mint", "--key", keyDir + "/kubernetes/rsa.pub", "--issuer", iss, "--out", "-"}, "no private key"},
		{"mint short lifetime", []string{"mint", "--key", keyDir + "/kubernetes/rsa.key", "--issuer", iss, "--lifetime", "5m", "--out", "-"}, "--lifetime 5m0s"},
		{"mint extended without pod", []string{"mint", "--key", keyDir + "/kubernetes/rsa.key", "--issuer", iss, "--lifetime", "3607s", "--extended", "--out", "-"}, "extends only pod-bound tokens"},
	}
	if os.Geteuid() != 0 {
		tests = append(tests, struct {
			name string
			args []string
			want string
		}{"unreadable file", []string{"inspect", unreadable}, "permission denied"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cmdtest.Run(t, token.NewCommand, nil, tt.args...)
			if r.Code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q stdout %q", r.Code, r.Stderr, r.Stdout)
			}
			if strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, tt.want) {
				t.Fatalf("stderr %q, want one line containing %q", r.Stderr, tt.want)
			}
			if r.Stdout != "" {
				t.Errorf("stdout %q, want nothing", r.Stdout)
			}
		})
	}
}
