// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/credwatch/credwatch/pkg/redact"
)

// Cut shortens s to at most max bytes (on a rune boundary) for a table cell or line, saying how
// much was left out; -o json and yaml carry the whole text. It redacts s first: a cut could part
// a secret from the words that mark it as one (`<password>` from `</password>`), after which the
// output's redaction would no longer see it.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	s = redact.Text(s)
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s… (%d more bytes in -o json)", s[:i], len(s)-i)
}

// Thousands formats n with comma separators: 1,204.
func Thousands(n int) string {
	if n < 0 {
		return "-" + Thousands(-n)
	}
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
