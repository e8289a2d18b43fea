// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestPublicIssuerErrorsPlain: what a hostile issuer serves reaches the report in plain words
// (no Go type or field names) and bounded, whatever it echoes.
func TestPublicIssuerErrorsPlain(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("c", 100<<10)
	tests := []struct {
		name, discovery string
		want            string
	}{
		{"issuer is a number", `{"issuer":5,"jwks_uri":"x"}`, `invalid JSON: "issuer" is a number, want a string`},
		{"a list, not an object", `[1]`, "invalid JSON: an array where an object was expected"},
		{"huge echoed name", `{"issuer":"i","jwks_uri":"/` + huge + `"}`, "more bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration") {
					_, _ = w.Write([]byte(tt.discovery))
					return
				}
				http.NotFound(w, r)
			}))
			defer srv.Close()
			p := fetchPublic(context.Background(), &Config{Timeout: 5 * time.Second}, srv.URL)
			if !strings.Contains(p.Error, tt.want) || strings.Contains(p.Error, "Go ") || len(p.Error) > 2<<10 {
				t.Errorf("error %.300q (%d bytes), want plain words with %q", p.Error, len(p.Error), tt.want)
			}
		})
	}
}
