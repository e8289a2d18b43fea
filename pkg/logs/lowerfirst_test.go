// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import "testing"

func TestLowerFirst(t *testing.T) {
	for in, want := range map[string]string{
		"":                                   "",
		"The token expired":                  "the token expired",
		"TLS handshake failed":               "TLS handshake failed",
		"NodeRestriction refused a token":    "NodeRestriction refused a token",
		"OpenStack rejected the credentials": "OpenStack rejected the credentials",
		"A":                                  "a",
	} {
		if got := lowerFirst(in); got != want {
			t.Errorf("lowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}
