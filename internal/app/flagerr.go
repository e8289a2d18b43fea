package app

import "strings"

// isFlagError recognises cobra's and pflag's usage errors, which come back as plain errors.
func isFlagError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand flag", "unknown command", "flag needs an argument",
		"invalid argument", "accepts ", "requires at least", "requires at most", "requires exactly",
		"required flag", "if any flags in the group", "none of the others can be", "at least one of the flags"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
