// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package catalogue_test

import (
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/kubever"
)

func TestEmbeddedCatalogue(t *testing.T) {
	c := catalogue.Default()
	for _, id := range []string{"issuer-not-accepted", "signing-key-unknown", "audience-mismatch", "token-expired",
		"token-not-yet-valid", "bound-object-invalidated", "serviceaccount-recreated", "bound-object-recreated",
		"serviceaccount-deleted", "serviceaccount-lookup-failed", "legacy-token-mismatch", "legacy-token-marked-invalid",
		"authn-webhook-rejected", "client-unauthorized", "token-refresh-failed", "cloud-login-failed",
		"oidc-provider-missing", "tls-untrusted", "cert-expired", "apiserver-endpoints-changed", "unknown"} {
		if _, ok := c.Get(id); !ok {
			t.Errorf("catalogue lacks %q", id)
		}
	}
}

func TestSpellingByLine(t *testing.T) {
	e := catalogue.Default().MustGet("signing-key-unknown")
	tests := []struct {
		line, key, want string
		ok              bool
	}{
		{"1.30", "crypto", "square/go-jose: error in cryptographic primitive", true},
		{"1.32", "crypto", "square/go-jose: error in cryptographic primitive", true},
		{"1.33", "crypto", "go-jose/go-jose: error in cryptographic primitive", true},
		{"1.36", "no-keys-found", "invalid signature, no keys found", true},
		{"1.30", "no-keys-found", "", false},
	}
	for _, tt := range tests {
		got, ok := e.Spelling(tt.key, kubever.MustParse(tt.line))
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s %s: got %q,%v want %q,%v", tt.line, tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field": "apiVersion: x\nkind: Catalogue\nversion: 1\nbogus: 1\n",
		"bad id":        "entries:\n- id: Bad_ID\n  kind: cause\n  severity: error\n  title: t\n  meaning: m\n  remedy: r\n",
		"dup id":        "entries:\n- {id: a, kind: cause, severity: error, title: t, meaning: m, remedy: r}\n- {id: a, kind: cause, severity: error, title: t, meaning: m, remedy: r}\n",
		"bad severity":  "entries:\n- {id: a, kind: cause, severity: loud, title: t, meaning: m, remedy: r}\n",
	} {
		if _, err := catalogue.Parse([]byte(doc)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
