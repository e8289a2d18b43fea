// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package gridtest reads tables as a person does, for tests of what report.Grid prints.
package gridtest

import (
	"strings"
	"unicode/utf8"
)

// Column is the text of the column headed header in a table's lines (the header line first),
// every line's part from the header's position on, trimmed and joined by a space: what a reader
// of a cell wrapped within its column reads. It is "" when no line has the header.
func Column(lines []string, header string) string {
	if len(lines) == 0 {
		return ""
	}
	i := strings.Index(lines[0], header)
	if i < 0 {
		return ""
	}
	at := utf8.RuneCountInString(lines[0][:i])
	var parts []string
	for _, l := range lines[1:] {
		if r := []rune(l); len(r) > at {
			parts = append(parts, strings.TrimSpace(string(r[at:])))
		}
	}
	return strings.Join(parts, " ")
}
