// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

import (
	"strings"
	"testing"
)

// checkIndexBar compares indexBar, the compose prefix's fast path, with the plain search it
// replaces, on line and on its first 67 bytes (all Compose looks at).
func checkIndexBar(t *testing.T, line string) {
	for _, s := range []string{line, line[:min(len(line), 67)]} {
		if got, want := indexBar(s), strings.Index(s, " | "); got != want {
			t.Errorf("indexBar(%q) = %d, want %d", s, got, want)
		}
	}
}

var indexBarSeeds = []string{`web_1  | E1129 08:00:00.000000 1 a.go:1] x`, `a | b`, `| x`, ` |`, `a || b | c`,
	`E1129 08:00:00.000000 1 a.go:1] x | y`, `I1231 23:59:59 x-y | z`, ``, `|`, `  |  `}
