// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPlain(t *testing.T) {
	t.Parallel()
	jsonErr := func(doc string, v any) string { return json.Unmarshal([]byte(doc), v).Error() }
	var disc struct {
		Issuer string `json:"issuer"`
	}
	var list []string
	tests := []struct {
		name, in, want string
	}{
		{"rate limiter at the deadline", `Get "https://10.0.0.1:6443/version": client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline`,
			`Get "https://10.0.0.1:6443/version": timed out before the request could be sent`},
		{"rate limiter cancelled", `list pods: client rate limiter Wait returned an error: context canceled`,
			`list pods: waiting to send the request: context canceled`},
		{"struct field", "decode discovery document: " + jsonErr(`{"issuer":5}`, &disc),
			`decode discovery document: invalid JSON: "issuer" is a number, want a string`},
		{"value", jsonErr(`"x"`, &list), `invalid JSON: a string where a list was expected`},
		{"object", jsonErr(`[1]`, &disc), `invalid JSON: an array where an object was expected`},
		{"type names", `unexpected *url.Error wrapping x509.UnknownAuthorityError`, `unexpected error wrapping certificate error`},
		{"plain text kept", `dial tcp 10.0.0.1:6443: connect: connection refused`, `dial tcp 10.0.0.1:6443: connect: connection refused`},
		{"host names kept", `Get "https://api.example.com/v1.Pods": EOF`, `Get "https://api.example.com/v1.Pods": EOF`},
	}
	for _, tt := range tests {
		if got := Plain(tt.in); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// TestPlainBounds: a server's 100 KB echo (a cluster name) is cut, on a rune boundary.
func TestPlainBounds(t *testing.T) {
	t.Parallel()
	in := `cluster "` + strings.Repeat("é", 50<<10) + `" not found`
	got := Plain(in)
	if len(got) > MaxErrorLine+64 || !strings.HasSuffix(got, "more bytes)") || !strings.HasPrefix(got, `cluster "éé`) {
		t.Fatalf("%d bytes: %.80s…%s", len(got), got, got[len(got)-30:])
	}
	if !strings.Contains(got, "é…") {
		t.Errorf("cut inside a rune: %q", got[MaxErrorLine-8:])
	}
}
