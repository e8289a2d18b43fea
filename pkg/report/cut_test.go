// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{strings.Repeat("a", 12), 10, "aaaaaaaaaa… (2 more bytes in -o json)"},
		{"ééééé", 5, "éé… (6 more bytes in -o json)"}, // not inside a rune
	}
	for _, tt := range tests {
		got := Cut(tt.in, tt.max)
		if got != tt.want || !utf8.ValidString(got) {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}
