// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package limits

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, size); err != nil { // sparse: nothing is written
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		path    string
		max     int64
		wantLen int
		wantErr string // "" = no error
	}{
		{"at the bound", write("at", 1<<10), 1 << 10, 1 << 10, ""},
		{"empty", write("empty", 0), 1 << 10, 0, ""},
		{"one byte over", write("over", 1<<10+1), 1 << 10, 0, "over: larger than 1 KiB"},
		{"200 MB sparse file", write("huge", 200<<20), File, 0, "huge: larger than 4 MiB"},
		{"missing", filepath.Join(dir, "missing"), File, 0, "missing: no such file or directory"},
		{"directory", dir, File, 0, ": is a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data, err := ReadFile(tt.path, tt.max)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr == "" && len(data) != tt.wantLen:
				t.Fatalf("read %d bytes, want %d", len(data), tt.wantLen)
			case tt.wantErr != "" && (err == nil || !strings.HasSuffix(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one ending %q", err, tt.wantErr)
			case tt.wantErr != "" && strings.Count(err.Error(), tt.path) != 1:
				t.Fatalf("error %q names %s other than once", err, tt.path)
			}
			if strings.Contains(tt.wantErr, "larger than") && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error %v does not wrap ErrTooLarge", err)
			}
			if err := Stat(tt.path, tt.max); (err != nil) != strings.Contains(tt.wantErr, "larger than") {
				t.Fatalf("Stat: %v", err)
			}
		})
	}
}

func TestTransport(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := len(r.URL.Query().Get("n"))
		if r.URL.Query().Get("len") != "" {
			w.Header().Set("Content-Length", "1000000")
		}
		if _, err := io.WriteString(w, strings.Repeat("x", n)); err != nil {
			return
		}
		if r.URL.Query().Get("endless") != "" {
			for {
				if _, err := w.Write(make([]byte, 32<<10)); err != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(srv.Close)
	c := &http.Client{Transport: Transport(http.DefaultTransport, 100, 0)}
	n := func(k int) string { return strings.Repeat("1", k) }
	tests := []struct {
		name     string
		query    string
		streamed bool // the request's context is Streamed
		wantLen  int
		wantErr  bool
	}{
		{"small", "n=" + n(10), false, 10, false},
		{"at the bound", "n=" + n(100), false, 100, false},
		{"one over", "n=" + n(101), false, 0, true},
		{"endless", "endless=1", false, 0, true},
		{"declared too long", "len=1&n=" + n(10), false, 0, true},
		{"watch passes", "watch=true&n=" + n(150), false, 150, false},
		{"a streamed list passes", "n=" + n(150), true, 150, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			if tt.streamed {
				ctx = Streamed(ctx)
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/pods?"+tt.query, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			var tl *TooLargeError
			switch {
			case !tt.wantErr && err != nil:
				t.Fatalf("error %v", err)
			case !tt.wantErr && len(data) != tt.wantLen:
				t.Fatalf("read %d bytes, want %d", len(data), tt.wantLen)
			case tt.wantErr && !errors.As(err, &tl):
				t.Fatalf("error %v, want a *TooLargeError", err)
			case tt.wantErr && err.Error() != "response from "+srv.Listener.Addr().String()+"/api/v1/pods larger than 100 bytes":
				t.Fatalf("error %q", err)
			case tt.wantErr && len(data) > 100:
				t.Fatalf("read %d bytes past the bound", len(data))
			}
		})
	}
}
