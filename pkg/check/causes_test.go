// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/kubever"
)

func TestCauseOf(t *testing.T) {
	v136, v130 := kubever.MustParse("v1.36.3"), kubever.MustParse("v1.30.14")
	tests := []struct {
		name string
		text string
		v    kubever.Version
		want string
	}{
		{"empty: nobody claimed it", "", v136, "issuer-not-accepted"},
		{"bare loopback error", "invalid bearer token", v136, "issuer-not-accepted"},
		{"unknown kid (1.31+)", "[invalid bearer token, invalid signature, no keys found]", v136, "signing-key-unknown"},
		{"crypto (1.30)", "[invalid bearer token, square/go-jose: error in cryptographic primitive]", v130, "signing-key-unknown"},
		{"crypto (1.33+)", "[invalid bearer token, go-jose/go-jose: error in cryptographic primitive]", v136, "signing-key-unknown"},
		{"expired", "[invalid bearer token, service account token has expired]", v136, "token-expired"},
		{"not valid yet", "[invalid bearer token, service account token is not valid yet]", v136, "token-not-yet-valid"},
		{"audience", `[invalid bearer token, token audiences ["https://old"] is invalid for the target audiences ["https://new"]]`, v136, "audience-mismatch"},
		{"invalidated", "[invalid bearer token, service account token has been invalidated]", v136, "bound-object-invalidated"},
		{"sa uid", "[invalid bearer token, service account UID (a) does not match claim (b)]", v136, "serviceaccount-recreated"},
		{"sa not found", `[invalid bearer token, serviceaccounts "x" not found]`, v136, "serviceaccount-deleted"},
		{"deadline", "[invalid bearer token, context deadline exceeded]", v136, "serviceaccount-lookup-failed"},
		{"no version", "[invalid bearer token, invalid signature, no keys found]", kubever.Version{}, "signing-key-unknown"},
		{"something new", "[invalid bearer token, the moon is in the wrong phase]", v136, "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CauseOf(tt.text, tt.v); got != tt.want {
				t.Errorf("CauseOf(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func FuzzCauseOf(f *testing.F) {
	f.Add("[invalid bearer token, invalid signature, no keys found]", "v1.36.3")
	f.Add("", "")
	cat := catalogue.Default()
	f.Fuzz(func(t *testing.T, text, version string) {
		v, _ := kubever.Parse(version)
		c := CauseOf(text, v)
		if _, ok := cat.Get(c); !ok {
			t.Fatalf("CauseOf(%q) = %q, which is not in the catalogue", text, c)
		}
	})
}
