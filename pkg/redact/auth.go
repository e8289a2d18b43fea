// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"encoding/base64"
	"regexp"
	"strings"
)

// UserInfo replaces the password of every URL's userinfo with Marker and keeps the user:
// https://admin:REDACTED@vcenter/sdk.
func UserInfo(s string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
		return s
	}
	var edits []edit
	for i := 0; ; {
		j := strings.Index(s[i:], "://")
		if j < 0 {
			break
		}
		lo := i + j + 3
		hi := lo
		for hi < len(s) && !authorityEnd(s[hi]) {
			hi++
		}
		i = hi
		at := strings.LastIndexByte(s[lo:hi], '@')
		if at < 0 {
			continue
		}
		colon := strings.IndexByte(s[lo:lo+at], ':')
		if colon < 0 || colon+1 == at || s[lo+colon+1:lo+at] == Marker {
			continue
		}
		edits = append(edits, edit{lo + colon + 1, lo + at, Marker})
	}
	return apply(s, edits)
}

// authorityEnd says whether c ends a URL's authority (or the URL).
func authorityEnd(c byte) bool { return authorityEnds[c] }

// authorityEnds is authorityEnd by byte.
var authorityEnds = func() (t [256]bool) {
	for c := range t {
		t[c] = c <= ' ' || strings.IndexByte(`/?#"'<>\`+"`", byte(c)) >= 0
	}
	return t
}()

// AuthValues replaces Authorization credentials with Marker: "Basic <base64 of user:password>"
// and "Bearer <value>" for a value that is not a word (a JWT's header was kept by Tokens, which
// cut its signature). "basic auth" and "bearer token" in prose stay.
func AuthValues(s string) string {
	var edits []edit
	// One scan for the b of both schemes (a report says "bearer token" often), each scheme
	// looked at from where its own scan would be: after its last value.
	var from [len(authSchemes)]int
	f := newFolds(s, "b")
	for j := 0; ; j++ {
		if j = f.next(j); j < 0 {
			break
		}
		for k, scheme := range authSchemes {
			if j < from[k] || !hasPrefixFold(s[j:], scheme) {
				continue
			}
			p, i := j, j+len(scheme)
			from[k] = i
			if p > 0 && keyByte[s[p-1]] {
				continue // part of a word
			}
			if vs, ve, ok := schemeValue(s, scheme, i); ok {
				edits = append(edits, edit{vs, ve, Marker})
				from[k] = ve
			}
		}
	}
	return apply(s, edits)
}

// schemeValue is the span of the credential that follows an Authorization scheme ending at
// s[i], if one does.
func schemeValue(s, scheme string, i int) (vs, ve int, ok bool) {
	vs = skipBlanks(s, i, false)
	if vs < len(s) && s[vs] == '\n' { // a YAML printer folds long lines at spaces
		vs = skipBlanks(s, vs+1, false)
	}
	if vs == i && hasPrefixFold(s[i:], "%20") {
		vs = i + 3
	}
	if vs == i {
		return 0, 0, false
	}
	ve = vs
	for ve < len(s) && credByte[s[ve]] {
		ve++
	}
	v := s[vs:ve]
	if v == "" || strings.Contains(v, Marker) {
		return 0, 0, false
	}
	return vs, ve, scheme == "basic" && basicCredential(v) || scheme == "bearer" && opaqueToken(v)
}

// authSchemes are the Authorization schemes AuthValues reads.
var authSchemes = [...]string{"basic", "bearer"}

// basicCredential says whether v is the base64 of user:password.
func basicCredential(v string) bool {
	d, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		d, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "="))
	}
	return err == nil && strings.IndexByte(string(d), ':') >= 0
}

// opaqueToken says whether a bearer value is a token rather than a word ("bearer token",
// "Bearer authentication"): 8 characters or more with a digit, a symbol or two capitals after
// the first character in it, or 16 or more.
func opaqueToken(v string) bool {
	if len(v) < 8 {
		return false
	}
	if len(v) >= 16 {
		return true
	}
	caps := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= '0' && c <= '9' || strings.IndexByte("-._~+/=", c) >= 0 {
			return true
		}
		if i > 0 && c >= 'A' && c <= 'Z' {
			caps++
		}
	}
	return caps >= 2
}

// credByte is the characters of an RFC 6750 token68 (bearer and basic credentials), by byte.
var credByte = func() (t [256]bool) {
	for c := range t {
		t[c] = isRunByte(byte(c)) || c == '~' || c == '+' || c == '/' || c == '='
	}
	return t
}()

// xmlOpenRE is an opening tag named like a credential, raw or HTML- or JSON-escaped.
var xmlOpenRE = regexp.MustCompile(`(?i)(<|&lt;|\\u003c)(?:[a-z0-9_.-]+:)?[a-z0-9_.-]*(?:password|passwd|secret|token|apikey|api_key|secretkey)(?:\s[^<>]*)?(>|&gt;|\\u003e)`)

// XMLValues replaces the content of every XML element named like a credential (<password>,
// <ns:clientSecret>, <token>) with Marker.
func XMLValues(s string) string {
	if !strings.Contains(s, "</") && !containsFold(s, "&lt;/") && !containsFold(s, `\u003c/`) {
		return s
	}
	var edits []edit
	for _, m := range xmlOpenRE.FindAllStringSubmatchIndex(s, -1) {
		open := s[m[2]:m[3]]
		vs := m[1]
		ve := strings.Index(strings.ToLower(s[vs:]), strings.ToLower(open)+"/")
		if ve <= 0 || strings.Contains(s[vs:vs+ve], Marker) {
			continue
		}
		edits = append(edits, edit{vs, vs + ve, Marker})
	}
	return apply(s, edits)
}
