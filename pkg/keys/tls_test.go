// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package keys_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
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

// TestRefuseDowngrade: key material reached over https is never read over plain http, whether a
// redirect or a discovery document's jwks_uri leads there. Two servers on 127.0.0.1: an https
// issuer and a plain http one holding the same JWKS.
func TestRefuseDowngrade(t *testing.T) {
	t.Parallel()
	doc, err := keys.JWKS(kubeKeys(t))
	if err != nil {
		t.Fatal(err)
	}
	var plainHits atomic.Int32
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainHits.Add(1)
		_, _ = w.Write(doc)
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-plain":
			http.Redirect(w, r, plain.URL+"/jwks", http.StatusFound)
		case "/to-self":
			http.Redirect(w, r, "/jwks", http.StatusFound)
		case "/plain-jwks" + keys.DiscoveryPath:
			fmt.Fprintf(w, `{"issuer":"x","jwks_uri":%q}`, plain.URL+"/jwks")
		case "/redirected-jwks" + keys.DiscoveryPath:
			fmt.Fprintf(w, `{"issuer":"x","jwks_uri":%q}`, "https://"+r.Host+"/to-plain")
		case "/jwks":
			_, _ = w.Write(doc)
		default:
			http.NotFound(w, r)
		}
	}))
	defer secure.Close()
	refused := "refused to follow https to " + keys.Origin(mustURL(t, plain.URL))
	tests := []struct {
		name, spec, wantErr string
	}{
		{"redirect to http", secure.URL + "/to-plain", refused},
		{"jwks_uri on http", secure.URL + "/plain-jwks", "jwks_uri: " + refused},
		{"jwks_uri redirected to http", secure.URL + "/redirected-jwks", "jwks_uri: " + secure.URL + "/to-plain: " + refused},
		{"redirect within https", secure.URL + "/to-self", ""},
		{"plain http asked for", plain.URL + "/jwks", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := plainHits.Load()
			s, err := keys.Load(context.Background(), tt.spec, keys.FetchOptions{Timeout: 5 * time.Second, Insecure: true})
			if tt.wantErr == "" {
				if err != nil || len(s.Keys) != 2 {
					t.Fatalf("%v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v, want one line with %q", err, tt.wantErr)
			}
			if n := plainHits.Load() - before; n != 0 {
				t.Errorf("the plain http server was asked %d time(s)", n)
			}
		})
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
