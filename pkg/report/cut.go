package report

import (
	"fmt"
	"unicode/utf8"
)

// Cut shortens s to at most max bytes (on a rune boundary) for a table cell or line, saying how
// much was left out; -o json and yaml carry the whole text.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s… (%d more bytes in -o json)", s[:i], len(s)-i)
}
