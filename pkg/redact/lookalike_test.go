// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import "testing"

// TestLookalike: strings that display alike are told apart at their first differing byte;
// equal strings and strings that look different are not.
func TestLookalike(t *testing.T) {
	const svc = "https://kubernetes.default.svc"
	tests := []struct {
		name, a, b, want string
	}{
		{"equal", svc, svc, ""},
		{"different", svc, "https://oidc.example.com", ""},
		{"different by one ASCII letter", svc, "https://kubernetes.default.svd", ""},
		{"Cyrillic a", "https://kubernetes.defаult.svc", svc, "differ at byte 22 (U+0430 vs 'a')"},
		{"Greek nu", svc, "https://kubernetes.default.sνc", "differ at byte 28 ('v' vs U+03BD)"},
		{"zero-width space", "https://kubernetes\u200b.default.svc", svc, "differ at byte 18 (U+200B vs '.')"},
		{"bidi override at the end", svc + "\u202e", svc, "differ at byte 30 (U+202E vs the end)"},
		{"byte-order mark first", "\ufeff" + svc, svc, "differ at byte 0 (U+FEFF vs 'h')"},
		{"NUL", "kid\x00", "kid", "differ at byte 3 (U+0000 vs the end)"},
		{"two homoglyphs, first named", "hттps://x", "https://x", "differ at byte 1 (U+0442 vs 't')"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Lookalike(tt.a, tt.b); got != tt.want {
				t.Errorf("Lookalike(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
			}
		})
	}
	if got, want := LookalikeIn("k\u200b1", "k2", "k1"), `"k\u200b1" and "k1" differ at byte 1 (U+200B vs '1')`; got != want {
		t.Errorf("LookalikeIn = %q, want %q", got, want)
	}
}
