// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

import (
	"strings"
)

// Compose reads docker compose's prefix: "<service>   | <line>".
func Compose(line string) (rest, service string, ok bool) {
	bar := indexBar(line[:min(len(line), 64+len(" | "))]) // only the first can count
	if bar <= 0 || bar > 64 {
		return "", "", false
	}
	name := strings.TrimRight(line[:bar], " ")
	// compose names are project-service-1 (v2) or project_service_1 (v1)
	if len(name) < 3 || !isName(name) || !strings.ContainsAny(name, "-_") {
		return "", "", false
	}
	return line[bar+3:], name, true
}

// indexBar is strings.Index(s, " | "), looking for the rarer '|' first.
func indexBar(s string) int {
	for from := 1; from < len(s)-1; {
		i := strings.IndexByte(s[from:len(s)-1], '|')
		if i < 0 {
			return -1
		}
		i += from
		if s[i-1] == ' ' && s[i+1] == ' ' {
			return i - 1
		}
		from = i + 1
	}
	return -1
}

// isName reports whether s looks like a program or service name.
func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
