// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRunLogsClaimsNotToken(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	sig := "c2lnbmF0dXJlLW5ldmVyLXByaW50ZWQ"
	tok := enc([]byte(`{"alg":"RS256","kid":"k1"}`)) + "." + enc([]byte(`{"iss":"https://kubernetes.default.svc","aud":["registry.credwatch.lab"],"sub":"system:serviceaccount:ns:puller","jti":"j-1","exp":1}`)) + "." + sig
	req := `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderRequest","image":"127.0.0.1:5999/lab/app:1","serviceAccountToken":"` + tok + `"}`
	log := filepath.Join(t.TempDir(), "requests.log")
	var out bytes.Buffer
	if err := run(strings.NewReader(req), &out, log, func() time.Time { return time.Unix(0, 0) }); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kid":"k1"`, `"aud":["registry.credwatch.lab"]`, `"jti":"j-1"`, `"token":true`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("log %s lacks %s", data, want)
		}
	}
	for what, s := range map[string]string{"log": string(data), "answer": out.String()} {
		if strings.Contains(s, sig) || strings.Contains(s, tok) {
			t.Errorf("%s shows the token: %s", what, s)
		}
	}
	if !strings.Contains(out.String(), `"127.0.0.1:5999"`) || !strings.Contains(out.String(), `"cacheKeyType":"Image"`) {
		t.Errorf("answer %s: want credentials for 127.0.0.1:5999, cache key Image", out.String())
	}
}

func TestRunBadRequest(t *testing.T) {
	var out bytes.Buffer
	err := run(strings.NewReader("{"), &out, "", time.Now)
	if err == nil || !strings.Contains(err.Error(), "CredentialProviderRequest") {
		t.Fatalf("err %v: want one naming the request", err)
	}
}

// FuzzRun: whatever the kubelet hands it, the provider answers or fails with an error, and
// never writes the token it was given to its log or its answer.
func FuzzRun(f *testing.F) {
	f.Add(`{"image":"127.0.0.1:5999/a","serviceAccountToken":"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"}`)
	f.Add(`{"image":"x","serviceAccountToken":"a.b"}`)
	f.Add(`{`)
	f.Fuzz(func(t *testing.T, req string) {
		log := filepath.Join(t.TempDir(), "requests.log")
		var out bytes.Buffer
		_ = run(strings.NewReader(req), &out, log, time.Now)
		data, _ := os.ReadFile(log)
		var r struct {
			Token string `json:"serviceAccountToken"`
		}
		if json.Unmarshal([]byte(req), &r) == nil && len(r.Token) > 8 {
			if sig := r.Token[strings.LastIndexByte(r.Token, '.')+1:]; len(sig) > 8 && (strings.Contains(string(data), sig) || strings.Contains(out.String(), sig)) {
				t.Errorf("the token's last part %q shows in the log or the answer", sig)
			}
		}
	})
}
