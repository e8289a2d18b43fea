// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package app

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/credwatch/credwatch/pkg/redact/redacttest"
)

// plantedSpellings are credential spellings (issue #20) an echoing server puts in its error
// messages, each with the secret part that must appear in no output.
var plantedSpellings = []struct{ text, secret string }{
	{"proxy https://proxyuser:Pr0xyPassw0rd@proxy.internal:3128", "Pr0xyPassw0rd"},
	{"X-Auth-Token: gAAAAABkOpaqueKeystone42", "gAAAAABkOpaqueKeystone42"},
	{"token=zq7Opaque0TokenValue", "zq7Opaque0TokenValue"},
	{"api_key=AKIAPLANTED12345", "AKIAPLANTED12345"},
	{"secret=Planted5ecret", "Planted5ecret"},
	{"pwd=PlantedPwd99", "PlantedPwd99"},
	{"aws_secret_access_key=wJalrPLANTEDEXAMPLEKEY", "wJalrPLANTEDEXAMPLEKEY"},
	{"secretKey: PlantedSecretKey7", "PlantedSecretKey7"},
	{"<password>PlantedXmlPw1</password>", "PlantedXmlPw1"},
	{"password%3DPlantedPct22", "PlantedPct22"},
	{"client_secret=PlantedClient9", "PlantedClient9"},
}

// echoServer answers every request with an error (401, 403 or 500 by turns) whose Status message
// echoes the request's Authorization header and carries every planted spelling, as a careless
// proxy or API server might. It counts the requests that carried credentials.
func echoServer(t *testing.T) (addr string, seen *atomic.Int64) { return echoServerWith(t, false) }

// echoServerWith is echoServer that also echoes the request's body and its bare credential when
// body is set (a member that quotes what it refuses).
func echoServerWith(t *testing.T, body bool) (addr string, seen *atomic.Int64) {
	seen = &atomic.Int64{}
	codes := []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusInternalServerError}
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if auth != "" {
			seen.Add(1)
		}
		parts := []string{"request denied for Authorization: " + auth}
		if body && r.URL.Path == "/version" {
			_, _ = io.WriteString(w, `{"major":"1","minor":"30","gitVersion":"v1.30.4"}`)
			return
		}
		if body {
			b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
			_, cred, _ := strings.Cut(auth, " ")
			parts = append(parts, "request body: "+string(b), "credential "+cred+" not accepted")
		}
		for _, p := range plantedSpellings {
			parts = append(parts, p.text)
		}
		code := codes[int(n.Add(1))%len(codes)]
		status, _ := json.Marshal(map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure",
			"message": strings.Join(parts, "; "), "code": code})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write(status)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // check's TLS probes hang up on purpose
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "https://"), seen
}

// credKubeconfig writes a kubeconfig for https://addr, with no CA check, whose user is user (a
// YAML flow mapping).
func credKubeconfig(t *testing.T, addr, user string) string {
	p := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://%s", insecure-skip-tls-verify: true}
users:
- name: u
  user: %s
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`, addr, user)
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNoSecretInOutput runs check through Main against a server that echoes the Authorization
// header and planted credentials in its errors, with a JWT, an opaque token and basic auth, in
// every -o format and across contexts: no token, signature, password or planted secret reaches
// stdout or stderr (the skipped-check lines, diagnostics and the error line).
func TestNoSecretInOutput(t *testing.T) {
	addr, seen := echoServer(t)
	sig := redacttest.Marker([]byte("echo"), 43)
	jwt := redacttest.JWS(sig)
	const opaque, user, password = "cw-opaque-7f3k9q2x1z", "admin", "Pw-7x!q2Zr"
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(opaque+"-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	creds := []struct {
		name, user string
		secrets    []string
	}{
		{"jwt", "{token: " + jwt + "}", []string{sig, sig[:16], sig[len(sig)-16:]}},
		{"opaque", "{token: " + opaque + "}", []string{opaque}},
		{"token file", "{tokenFile: " + tokenFile + "}", []string{opaque + "-file"}},
		{"basic", fmt.Sprintf("{username: %s, password: %q}", user, password), []string{password, basic, strings.TrimRight(basic, "=")}},
	}
	for _, c := range creds {
		kc := credKubeconfig(t, addr, c.user)
		for _, args := range [][]string{
			{"-o", "table"}, {"-o", "json"}, {"-o", "yaml"}, {"-o", "sarif"}, {"-o", "junit"},
			{"--all-contexts"}, {"--all-contexts", "-o", "json"},
		} {
			t.Run(c.name+"/"+strings.Join(args, " "), func(t *testing.T) {
				before := seen.Load()
				var out, errOut bytes.Buffer
				argv := append([]string{"credwatch", "check", "--kubeconfig", kc, "--no-cloud", "--timeout", "5s"}, args...)
				code := Main(argv, strings.NewReader(""), &out, &errOut)
				if seen.Load() == before {
					t.Fatalf("the server saw no credentials (exit %d)\nstderr: %s", code, errOut.String())
				}
				all := out.String() + errOut.String()
				if !strings.Contains(all, "request denied") {
					t.Fatalf("the echoed message reached no output (exit %d): the test proves nothing\nstdout: %s\nstderr: %s", code, out.String(), errOut.String())
				}
				secrets := c.secrets
				for _, p := range plantedSpellings {
					secrets = append(secrets, p.secret)
				}
				for _, s := range secrets {
					if strings.Contains(all, s) {
						t.Errorf("%q leaked (exit %d)\nstdout: %s\nstderr: %s", s, code, out.String(), errOut.String())
					}
				}
			})
		}
	}
}

// TestTokenFileNeverPrinted: an opaque (non-JWT) --token-file token that a member echoes back
// (here in every error, with the request's body) appears in no output: it is a known secret of
// the whole run, whatever format prints it (issue 37).
func TestTokenFileNeverPrinted(t *testing.T) {
	addr, seen := echoServerWith(t, true)
	const opaque = "cw-0paque-tokenfile-5k2m"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(opaque+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kc := credKubeconfig(t, addr, "{token: cw-kubeconfig-token-7q}")
	for _, format := range []string{"table", "json", "yaml", "sarif"} {
		t.Run(format, func(t *testing.T) {
			before := seen.Load()
			var out, errOut bytes.Buffer
			argv := []string{"credwatch", "check", "--kubeconfig", kc, "--no-cloud", "--timeout", "5s",
				"--endpoint", "https://" + addr, "--token-file", tokenFile, "-o", format}
			code := Main(argv, strings.NewReader(""), &out, &errOut)
			if seen.Load() == before {
				t.Fatalf("the server saw no request (exit %d)\nstderr: %s", code, errOut.String())
			}
			all := out.String() + errOut.String()
			if !strings.Contains(all, "request body") {
				t.Fatalf("no echoed body reached an output (exit %d): the test proves nothing\nstdout: %s\nstderr: %s", code, out.String(), errOut.String())
			}
			if strings.Contains(all, opaque) {
				t.Errorf("the --token-file token leaked (exit %d)\nstdout: %s\nstderr: %s", code, out.String(), errOut.String())
			}
		})
	}
}
