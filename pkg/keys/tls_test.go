// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package keys_test

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/keys"
)

func TestLoadHTTPS(t *testing.T) {
	t.Parallel()
	doc, err := keys.JWKS(kubeKeys(t))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		auth []string
	)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		_, _ = w.Write(doc)
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	url := srv.URL + "/openid/v1/jwks"
	tests := []struct {
		name    string
		o       keys.FetchOptions
		wantErr string
	}{
		{"untrusted", keys.FetchOptions{}, "certificate signed by unknown authority"},
		{"ca file", keys.FetchOptions{CAFile: ca, BearerToken: "t0k"}, ""},
		{"insecure", keys.FetchOptions{Insecure: true}, ""},
		{"bad ca file", keys.FetchOptions{CAFile: "keys_test.go"}, "no PEM certificates"},
	}
	for _, tt := range tests {
		tt.o.Timeout = 5 * time.Second
		s, err := keys.Load(context.Background(), url, tt.o)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: err %v, want one line with %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || len(s.Keys) != 2 {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) != 2 || auth[0] != "Bearer t0k" || auth[1] != "" {
		t.Errorf("Authorization headers %q, want the bearer token only where configured", auth)
	}
}
