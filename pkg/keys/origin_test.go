// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package keys_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/keys"
)

// TestTokenStaysHome: --bearer-token-file goes to the origin named on the command line and
// nowhere else, unless TokenToJWKSHost says so. Two servers on 127.0.0.1: the issuer, and
// another origin holding the JWKS.
func TestTokenStaysHome(t *testing.T) {
	doc, err := keys.JWKS(kubeKeys(t))
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		mu   sync.Mutex
		auth map[string]string // path → Authorization
	}
	record := func(s *seen, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.auth[r.URL.Path] = r.Header.Get("Authorization")
	}
	var atOther seen
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(&atOther, r)
		_, _ = w.Write(doc)
	}))
	t.Cleanup(other.Close)
	var atIssuer seen
	issuer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(&atIssuer, r)
		switch r.URL.Path {
		case "/home" + keys.DiscoveryPath:
			fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q}`, "x", "http://"+r.Host+"/jwks")
		case "/away" + keys.DiscoveryPath:
			fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q}`, "x", other.URL+"/jwks")
		case "/redirect":
			http.Redirect(w, r, other.URL+"/jwks", http.StatusFound)
		case "/jwks":
			_, _ = w.Write(doc)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(issuer.Close)
	tests := []struct {
		name      string
		spec      string
		allow     bool
		issuerJWK string // Authorization the issuer's /jwks saw ("-" = not asked)
		otherJWK  string // Authorization the other origin's /jwks saw ("-" = not asked)
		note      string // part of the one note, "" = none
	}{
		{"jwks_uri at home", issuer.URL + "/home", false, "Bearer t0k", "-", ""},
		{"jwks_uri elsewhere", issuer.URL + "/away", false, "-", "", "is on another origin than " + issuer.URL},
		{"jwks_uri elsewhere, allowed", issuer.URL + "/away", true, "-", "Bearer t0k", ""},
		{"redirect elsewhere", issuer.URL + "/redirect", false, "-", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			atIssuer.auth, atOther.auth = map[string]string{}, map[string]string{}
			s, err := keys.Load(context.Background(), tt.spec, keys.FetchOptions{Timeout: 5 * time.Second, BearerToken: "t0k", TokenToJWKSHost: tt.allow})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				at   *seen
				want string
			}{{&atIssuer, tt.issuerJWK}, {&atOther, tt.otherJWK}} {
				got, asked := c.at.auth["/jwks"]
				if !asked {
					got = "-"
				}
				if got != c.want {
					t.Errorf("a /jwks saw Authorization %q, want %q", got, c.want)
				}
			}
			switch {
			case tt.note == "" && len(s.Notes) > 0:
				t.Errorf("notes %q, want none", s.Notes)
			case tt.note != "" && (len(s.Notes) != 1 || !strings.Contains(s.Notes[0], tt.note)):
				t.Errorf("notes %q, want one containing %q", s.Notes, tt.note)
			}
			for _, n := range s.Notes {
				if strings.Contains(n, "t0k") {
					t.Errorf("note %q shows the token", n)
				}
			}
		})
	}
}
