// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package limits

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestAPIOnly(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		w.Header().Set("Content-Type", q.Get("ct"))
		if s := q.Get("status"); s != "" {
			var code int
			fmt.Sscan(s, &code)
			w.WriteHeader(code)
		}
		_, _ = io.WriteString(w, q.Get("body"))
	}))
	t.Cleanup(srv.Close)
	c := &http.Client{Transport: APIOnly(http.DefaultTransport)}
	html := "<html>" + strings.Repeat("x", 499) + "</html>" // 512 bytes
	tests := []struct {
		name, ct, body, status string
		wantErr                string // "" = the body passes unchanged
	}{
		{"API object", "application/json", `  {"kind":"Status"}`, "", ""},
		{"HTML page", "text/html; charset=utf-8", html, "", "/version: not a Kubernetes API response (HTML, 512 bytes)"},
		{"JSON array", "application/json", `[1,2]`, "", "/version: not a Kubernetes API response (JSON, 5 bytes)"},
		{"JSON string after white space", "application/json", "\n\n \"hi\"", "", "/version: not a Kubernetes API response (JSON, 7 bytes)"},
		{"empty JSON", "application/json", "", "", ""},
		{"metrics text", "text/plain", "# HELP x\n", "", ""},
		{"HTML error page keeps its status", "text/html", html, "502", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := "?ct=" + urlq(tt.ct) + "&body=" + urlq(tt.body) + "&status=" + tt.status
			resp, err := c.Get(srv.URL + "/version" + q)
			if tt.wantErr != "" {
				var na *NotAPIError
				if !errors.As(err, &na) || Clean(err).Error() != srv.URL+tt.wantErr {
					t.Fatalf("error %v, want %s%s", err, srv.URL, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if err != nil || string(got) != tt.body {
				t.Fatalf("body %q, %v; want %q", got, err, tt.body)
			}
		})
	}
}

func urlq(s string) string { return url.QueryEscape(s) }

func TestClean(t *testing.T) {
	t.Parallel()
	tl := &TooLargeError{Name: "h:1/api/v1/pods", Max: 64 << 20, Response: true}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"client-go read error", fmt.Errorf("list pods: %w", fmt.Errorf("unexpected error when reading response body. Please retry. Original error: %w", tl)),
			"list pods: response from h:1/api/v1/pods larger than 64 MiB"},
		{"url.Error", fmt.Errorf("probe: %w", &url.Error{Op: "Get", URL: "https://h:1/version?timeout=5s", Err: &NotAPIError{URL: "https://h:1/version", What: "HTML", Size: 512}}),
			"probe: https://h:1/version: not a Kubernetes API response (HTML, 512 bytes)"},
		{"bare", tl, "response from h:1/api/v1/pods larger than 64 MiB"},
		{"other errors pass", errors.New(`Get "x": refused`), `Get "x": refused`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Clean(tt.err)
			if got.Error() != tt.want {
				t.Fatalf("Clean = %q, want %q", got, tt.want)
			}
			if errors.Is(tt.err, ErrTooLarge) != errors.Is(got, ErrTooLarge) {
				t.Fatalf("Clean lost the typed error")
			}
		})
	}
}
