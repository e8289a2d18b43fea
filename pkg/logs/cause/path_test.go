// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cause

import (
	"slices"
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// TestUnknownIsAnAnswer: a failure on the credential path that no catalogue message names is
// unknown, with its nearest family and words; a line off the path, or one that logs no failure,
// is not classified at all.
func TestUnknownIsAnAnswer(t *testing.T) {
	cl := NewClassifier(catalogue.Default())
	tests := []struct {
		name   string
		l      Line
		family string // "" = not classified
		words  []string
	}{
		{"a token error nobody catalogued", Line{Msg: "failed to refresh the widget token: quota exhausted", Severity: "E"},
			"service-account tokens", []string{"token"}},
		{"a JWT library we never read", Line{Msg: `jwt verification error: "aud" mismatch`, Severity: "error"},
			"JWT and OIDC libraries", []string{"jwt", `"aud"`}},
		{"a cloud SDK's new words", Line{Msg: "AssumeRole call failed: credential chain exhausted"},
			"cloud credentials", []string{"AssumeRole", "credential"}},
		{"a TLS failure with new words", Line{Msg: "dial failed: x509: unhandled critical extension", Severity: "W"},
			"certificates", []string{"x509:"}},
		{"a relayed 401", Line{Msg: "policy webhook call failed with status: 401", Severity: "E"},
			"authentication", []string{": 401"}},
		{"info lines state, they do not fail", Line{Msg: "Starting legacy_token_tracking_controller; invalid tokens are counted", Severity: "I"}, "", nil},
		{"no failure word", Line{Msg: "post-timeout activity POST /api/v1/namespaces/x/serviceaccounts/tenant/token result: <nil>", Severity: "E"}, "", nil},
		{"no credential word", Line{Msg: `Endpoints "kubernetes" is invalid: may not be in the loopback range`, Severity: "E"}, "", nil},
		{"a volume claim is not a JWT claim", Line{Msg: "failed to bind persistentvolumeclaims data-0: invalid storage class", Severity: "E"}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := cl.Classify(tt.l)
			if tt.family == "" {
				if ok {
					t.Fatalf("classified as %s: want no cause", m.Cause)
				}
				return
			}
			if !ok || m.Cause != Unknown {
				t.Fatalf("got %v %+v, want unknown", ok, m)
			}
			fam, words, _ := Nearest(m.Text)
			if fam != tt.family || !slices.Equal(words, tt.words) {
				t.Errorf("nearest %q %q, want %q %q", fam, words, tt.family, tt.words)
			}
		})
	}
}

// TestSpellings: a sentence's final period is optional; other texts are matched as they are.
func TestSpellings(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"Token has expired.", []string{"Token has expired.", "Token has expired"}},
		{"token %s expired and refresh failed: %v", []string{"token %s expired and refresh failed: %v"}},
		{"wait...", []string{"wait..."}},
		{"short.", []string{"short."}},
	} {
		if got := spellings(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("spellings(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
