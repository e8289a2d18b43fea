// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token

import (
	"strconv"
	"strings"
	"unicode"
)

// Printable returns s for a terminal: unchanged if it has no control or invalid characters,
// else Go-quoted, so a hostile token cannot inject escape sequences into table output.
func Printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }) < 0 {
		return s
	}
	return strconv.Quote(s)
}
