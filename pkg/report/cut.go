package report

import (
	"fmt"
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
