// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"encoding/base64"
	"strings"
	"testing"
)

func jwt(header, payload string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(header)) + "." + enc([]byte(payload)) + ".c2lnbmF0dXJl"
}

func TestDecodeToken(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    tokenInfo
		wantErr string
	}{
		{"bound", jwt(`{"alg":"RS256","kid":"abc"}`, `{"iss":"https://i","sub":"system:serviceaccount:a:b","aud":["x","y"],"exp":1700000000}`),
			tokenInfo{KID: "abc", Issuer: "https://i", Subject: "system:serviceaccount:a:b", Audiences: []string{"x", "y"}, Exp: 1700000000}, ""},
		{"single aud string", jwt(`{"alg":"RS256"}`, `{"iss":"i","aud":"x","exp":1}`), tokenInfo{Issuer: "i", Audiences: []string{"x"}, Exp: 1}, ""},
		{"legacy", jwt(`{"alg":"RS256"}`, `{"iss":"kubernetes/serviceaccount","sub":"s"}`), tokenInfo{Issuer: "kubernetes/serviceaccount", Subject: "s", Legacy: true}, ""},
		{"two parts", "a.b", tokenInfo{}, "JWT"},
		{"bad base64", "!!.b.c", tokenInfo{}, "header"},
		{"bad aud", jwt(`{"alg":"RS256"}`, `{"aud":5}`), tokenInfo{}, "aud"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeToken(tt.raw)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.KID != tt.want.KID || got.Issuer != tt.want.Issuer || got.Subject != tt.want.Subject ||
				strings.Join(got.Audiences, ",") != strings.Join(tt.want.Audiences, ",") || got.Exp != tt.want.Exp || got.Legacy != tt.want.Legacy {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if s := got.summary(); strings.Contains(s, "c2lnbmF0dXJl") {
				t.Errorf("summary leaks the signature: %s", s)
			}
		})
	}
}

// FuzzDecodeToken: a summary is never longer than the token it describes plus its fixed words
// (it quotes claims, and the key ID only shortened).
func FuzzDecodeToken(f *testing.F) {
	f.Add(jwt(`{"alg":"RS256","kid":"abc"}`, `{"iss":"https://i","aud":["x"],"exp":1}`))
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, raw string) {
		ti, err := decodeToken(raw)
		if err != nil {
			return
		}
		if s := ti.summary(); len(s) > len(raw)+64 {
			t.Fatalf("summary of %d bytes for a %d-byte token: %q", len(s), len(raw), s)
		}
	})
}
