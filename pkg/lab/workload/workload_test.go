// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package workload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/bearer"
	"github.com/credwatch/credwatch/pkg/bearer/bearertest"
)

func TestComplete(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	inPod := env(map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443", "HOSTNAME": "tenant-abc"})
	tests := []struct {
		name    string
		c       Config
		getenv  func(string) string
		wantURL string
		wantErr string
	}{
		{"in a pod", Config{}, inPod, "https://10.96.0.1:443", ""},
		{"IPv6 service", Config{}, env(map[string]string{"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"}), "https://[fd00::1]:443", ""},
		{"URL given", Config{URL: "https://127.0.0.1:6443"}, env(nil), "https://127.0.0.1:6443", ""},
		{"not in a pod", Config{}, env(nil), "", "KUBERNETES_SERVICE_HOST"},
		{"plain http", Config{URL: "http://x"}, env(nil), "", "want https"},
		{"negative interval", Config{Interval: -time.Second}, inPod, "", "must be positive"},
		{"negative calls", Config{Calls: -1}, inPod, "", "calls -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Complete(tt.getenv)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.c.URL != tt.wantURL || tt.c.TokenFile != DefaultTokenFile || tt.c.CAFile != DefaultCAFile || tt.c.Interval != time.Second {
				t.Errorf("completed = %+v", tt.c)
			}
		})
	}
}

// jwt returns an unsigned-looking JWT with kid, iat and exp and the signature "SECRETSIG".
func jwt(kid string, iat, exp int64) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","kid":"`+kid+`"}`)) + "." +
		enc([]byte(`{"iss":"https://kubernetes.default.svc","iat":`+strconv.FormatInt(iat, 10)+`,"exp":`+strconv.FormatInt(exp, 10)+`}`)) + ".SECRETSIG"
}

// podFiles writes the projected volume files a kubelet would and returns a Config using them.
func podFiles(t *testing.T, url string, caPEM []byte, token string) Config {
	t.Helper()
	dir := t.TempDir()
	c := Config{URL: url, TokenFile: filepath.Join(dir, "token"), CAFile: filepath.Join(dir, "ca.crt"), Pod: "tenant-1", Interval: time.Millisecond, Timeout: 5 * time.Second, Summary: time.Hour}
	if err := os.WriteFile(c.CAFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if token != "" {
		if err := os.WriteFile(c.TokenFile, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func runLines(t *testing.T, c Config) ([]Line, string) {
	t.Helper()
	var out bytes.Buffer
	if err := Run(context.Background(), c, &out); err != nil {
		t.Fatal(err)
	}
	var lines []Line
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	for sc.Scan() {
		l, err := ParseLine(sc.Bytes())
		if err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		lines = append(lines, l)
	}
	return lines, out.String()
}

func TestRunRejected(t *testing.T) {
	srv, caPEM := bearertest.NewServer(t, "apiserver-3")
	c := podFiles(t, srv.URL, caPEM, jwt("kid-1", 1790000000, 1790003607))
	c.Calls = 3
	lines, raw := runLines(t, c)
	if strings.Contains(raw, "SECRETSIG") {
		t.Fatalf("the token signature is in the output:\n%s", raw)
	}
	if len(lines) != 4 || lines[3].Summary == nil {
		t.Fatalf("want 3 calls and a summary, got %d lines:\n%s", len(lines), raw)
	}
	call := lines[0].Call
	if call == nil || call.Status != 401 || call.ServedBy != "apiserver-3" || call.Reason != "Unauthorized" || call.Pod != "tenant-1" ||
		call.Token.KeyID != "kid-1" || call.Token.IssuedAt.Unix() != 1790000000 || call.Token.Expires.Unix() != 1790003607 {
		t.Errorf("call line = %+v", call)
	}
	s := lines[3].Summary
	if s.Requests != 3 || s.Unauthorized != 3 || len(s.Members) != 1 || s.Members[0].Member != "apiserver-3" || s.Members[0].Statuses[401] != 3 || len(s.Reasons) != 1 || s.Reasons[0] != "Unauthorized" {
		t.Errorf("summary = %+v", s)
	}
}

func TestRunAcceptedThenNoResponse(t *testing.T) {
	srv, caPEM := bearertest.NewServer(t, "apiserver-1")
	c := podFiles(t, srv.URL, caPEM, bearertest.GoodToken)
	c.Calls = 2
	lines, raw := runLines(t, c)
	if len(lines) != 3 || lines[0].Call.Status != 201 || lines[0].Call.User == "" {
		t.Fatalf("lines:\n%s", raw)
	}
	srv.Close()
	lines, raw = runLines(t, c)
	s := lines[len(lines)-1].Summary
	if s == nil || s.NoResponse != 2 || s.Members[0].Member != bearer.NoResponse || lines[0].Call.Error == "" {
		t.Errorf("after the server closed:\n%s", raw)
	}
}

func TestRunTokenMissing(t *testing.T) {
	srv, caPEM := bearertest.NewServer(t, "apiserver-1")
	c := podFiles(t, srv.URL, caPEM, "")
	c.Calls = 2
	lines, raw := runLines(t, c)
	s := lines[len(lines)-1].Summary
	if lines[0].Call.TokenError == "" || s.TokenErrors != 2 || s.Requests != 0 {
		t.Errorf("no token file:\n%s", raw)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	srv, caPEM := bearertest.NewServer(t, "apiserver-1")
	c := podFiles(t, srv.URL, caPEM, bearertest.GoodToken)
	c.Interval = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan error)
	go func() { done <- Run(ctx, c, &out) }()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if !strings.Contains(out.String(), `"type":"summary"`) {
		t.Errorf("no final summary:\n%s", out.String())
	}
}

func TestRunNoCA(t *testing.T) {
	c := Config{CAFile: filepath.Join(t.TempDir(), "missing")}
	if err := Run(context.Background(), c, &bytes.Buffer{}); err == nil {
		t.Error("Run without a CA succeeded")
	}
}

func TestParseLineRejects(t *testing.T) {
	for _, in := range []string{"", "not json", `{"type":"other"}`, `{"type":"call","status":"x"}`} {
		if _, err := ParseLine([]byte(in)); err == nil {
			t.Errorf("ParseLine(%q) succeeded", in)
		}
	}
}

func TestClaimsOf(t *testing.T) {
	tests := []struct {
		tok  string
		want TokenClaims
	}{
		{jwt("k", 100, 200), TokenClaims{KeyID: "k", IssuedAt: time.Unix(100, 0).UTC(), Expires: time.Unix(200, 0).UTC()}},
		{"opaque", TokenClaims{}},
		{"a.b.c", TokenClaims{}},
	}
	for _, tt := range tests {
		if got := claimsOf(tt.tok); got != tt.want {
			t.Errorf("claimsOf(%.20q) = %+v, want %+v", tt.tok, got, tt.want)
		}
	}
}
