// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxErrorLine bounds an error line: what a server echoes into an error (a 100 KB cluster name)
// is not printed whole.
const MaxErrorLine = 1024

var (
	// client-go's rest.Request wraps the rate limiter's error in its own words
	// (rest/request.go tryThrottle).
	rateLimiter = regexp.MustCompile(`client rate limiter Wait returned an error: (?:rate: Wait\(n=\d+\) would exceed context deadline|context deadline exceeded)`)
	rateOther   = regexp.MustCompile(`client rate limiter Wait returned an error: `)
	// encoding/json's UnmarshalTypeError names Go types and struct fields.
	jsonType = regexp.MustCompile(`json: cannot unmarshal (\w+) into Go (?:value of type|struct field (\S*) of type) (struct \{.*\}|\S+)`)
	// a Go type spelled by %T or %#v (*url.Error, x509.UnknownAuthorityError, *net.OpError),
	// standing as a word of its own: not part of a URL or a host name
	goType = regexp.MustCompile(`(^|[\s(\[:,"'])\*?(url|x509|tls|net|http|json|os|fs|syscall|strconv|errors|rest)\.[A-Z]\w*`)
)

// Plain rewrites an error's text for people: the Go type names and library wording that
// wrapped errors carry become plain words, and the line is bounded by MaxErrorLine.
func Plain(s string) string {
	s = rateLimiter.ReplaceAllString(s, "timed out before the request could be sent")
	s = rateOther.ReplaceAllString(s, "waiting to send the request: ")
	s = jsonType.ReplaceAllStringFunc(s, func(m string) string {
		p := jsonType.FindStringSubmatch(m)
		got, field, want := p[1], p[2], jsonKind(p[3])
		if i := strings.LastIndexByte(field, '.'); i >= 0 {
			field = field[i+1:]
		}
		if field != "" {
			return fmt.Sprintf("invalid JSON: %q is %s %s, want %s", field, article(got), got, want)
		}
		return fmt.Sprintf("invalid JSON: %s %s where %s was expected", article(got), got, want)
	})
	s = goType.ReplaceAllStringFunc(s, func(m string) string {
		p := goType.FindStringSubmatch(m)
		if p[2] == "x509" {
			return p[1] + "certificate error"
		}
		return p[1] + "error"
	})
	if len(s) > MaxErrorLine {
		i := MaxErrorLine
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = fmt.Sprintf("%s… (%d more bytes)", s[:i], len(s)-i)
	}
	return s
}

// jsonKind names the JSON a Go type reads.
func jsonKind(goType string) string {
	t := strings.TrimLeft(goType, "*")
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint") || strings.HasPrefix(t, "float"):
		return "a number"
	}
	return "an object"
}

func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an"
	}
	return "a"
}
