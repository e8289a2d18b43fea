// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"strings"
)

// keyWords are what a credential key contains; KeyValues looks at a key only where one is.
var keyWords = [...]string{"pass", "pwd", "secret", "token", "api", "auth", "key", "sig"}

// strongSuffixes end keys whose value is a credential after ':' as after '=' (lower case).
var strongSuffixes = []string{"password", "passwd", "passphrase", "secretkey", "secret_key", "secret-key",
	"secret_access_key", "secretaccesskey", "apikey", "api_key", "api-key", "auth-token", "auth_token", "authtoken",
	"access_token", "access-token", "accesstoken", "refresh_token", "refreshtoken", "id_token", "session_token",
	"sessiontoken", "bearer_token", "subject-token", "vault-token", "vault_token", "security-token",
	"security_token", "accountkey", "account_key", "sharedaccesskey", "key-data"}

// suffixesBy is strongSuffixes by last byte: classify runs on every key with a key word in it
// ("signingKey", "verifyKeys" are on most lines of a report) and tries only those that may match.
var suffixesBy = func() (t [256][]string) {
	for _, suf := range strongSuffixes {
		c := suf[len(suf)-1]
		t[c] = append(t[c], suf)
	}
	return t
}()

// weakKeys are credential keys only with '=' (or, quoted, when the value is the base64 of
// user:password, as a dockerconfig's "auth"): in prose "token: expired" and "secret: not found"
// are messages, and in credwatch's JSON "token" and "secret" name things.
var weakKeys = []string{"secret", "token", "pass", "pwd", "auth", "sig"}

// keyClass is how a key reads: not a credential, a credential with '=' or a quoted key only, or
// a credential with any separator.
type keyClass int

const (
	notKey keyClass = iota
	weakKey
	strongKey
)

// classify reads key (as spelt).
func classify(key string) keyClass {
	key = strings.TrimLeft(key, "-") // ASCII: a key is key bytes
	if key == "" {
		return notKey
	}
	for _, suf := range suffixesBy[lowerASCII(key[len(key)-1])] {
		if hasSuffixFold(key, suf) {
			return strongKey
		}
	}
	for _, w := range weakKeys {
		if len(key) == len(w) && strings.EqualFold(key, w) {
			return weakKey
		}
		if len(key) <= len(w) || !hasSuffixFold(key, w) {
			continue
		}
		// A qualified word: client_secret, app.secret, clientSecret, bootstrap-token, dbPass.
		before, first := key[len(key)-len(w)-1], key[len(key)-len(w)]
		qualified := before == '_' || before == '-' || before == '.' ||
			first >= 'A' && first <= 'Z' && (before >= 'a' && before <= 'z' || before >= '0' && before <= '9')
		switch {
		case !qualified:
		case w == "secret":
			return strongKey
		case w != "auth":
			return weakKey
		}
	}
	return notKey
}

// KeyValues replaces the value of every credential key in s with Marker (see the package doc):
// `password=…`, `"client_secret": "…"`, `X-Auth-Token: …`, `token=…`, `%22password%22%3A%22…%22`.
//
// A key is a value's only when a separator follows it, and separators ('=', ':', '%3D', '%3A')
// are fewer than the key words in credwatch's own output ("token" is on most lines of a
// report): the keys are found from the separators, backwards. A key word is then looked at as
// a scan for it would (fast_test.go keeps that scan as the specification): after a value was
// cut, a key holding the same word is looked at only from the value's end on.
func KeyValues(s string) string {
	var edits []edit
	var skip [len(keyWords)]int // for each key word, where a scan for it would resume
	var seps seps
	seps.init(s)
	for {
		p := seps.next()
		if p < 0 {
			break
		}
		if s[p] == '%' && !hasPrefixFold(s[p:], "%3d") && !hasPrefixFold(s[p:], "%3a") {
			continue
		}
		e := p
		for e > 0 && (s[e-1] == ' ' || s[e-1] == '\t') {
			e--
		}
		// The key ends at the blanks or before a quote; only a quote that ends in "2" (%22,
		// \u0022) leaves a key byte at e as well (a key "22" or "u0022", with no key word), so
		// the keys come out left to right.
		if e == 0 {
			continue
		}
		var kes [2]int
		n := 0
		switch c := s[e-1]; {
		case keyByte[c]:
			if c == '2' {
				for _, q := range [...]string{"%22", `\u0022`} {
					if ke := e - len(q); ke > 0 && strings.EqualFold(s[ke:e], q) {
						kes[n], n = ke, n+1
						break
					}
				}
			}
			kes[n], n = e, n+1
		case c == '"' || c == '\'' || c == ';':
			for _, q := range quotes {
				if ke := e - len(q); ke > 0 && q[len(q)-1] == c && strings.EqualFold(s[ke:e], q) {
					kes[n], n = ke, n+1
					break
				}
			}
		}
		for _, ke := range kes[:n] {
			if !keyByte[s[ke-1]] || !sepAt(s, ke) {
				continue
			}
			ks := ke
			for ks > 0 && keyByte[s[ks-1]] {
				ks--
			}
			words, any := keyWordsIn(s[ks:ke], ks, &skip)
			if !any {
				continue
			}
			if vs, ve, ok := keyValue(s, ks, ke); ok {
				edits = append(edits, edit{vs, ve, Marker})
				for k := range words {
					if words[k] {
						skip[k] = ve
					}
				}
			}
		}
	}
	return apply(s, edits)
}

// keyValue is the span of the credential value of the key s[ks:ke] (which a separator follows),
// if it is one.
func keyValue(s string, ks, ke int) (vs, ve int, ok bool) {
	if hasSuffixFold(s[ks:ke], "authorization") {
		return authorizationValue(s, ke)
	}
	c := classify(s[ks:ke])
	if c == notKey {
		return 0, 0, false
	}
	if c == weakKey && strings.EqualFold(s[ks:ke], "token") && yamlKey(s, ks) {
		// A kubeconfig's "token: <value>"; "token: expired" in prose is a word.
		vs, ve, eq, ok := valueSpan(s, ke, false)
		return vs, ve, ok && (eq || opaqueToken(s[vs:ve]))
	}
	vs, ve, eq, ok := valueSpan(s, ke, c == weakKey)
	if c == weakKey && !eq && ok {
		// "token": "minted through apiserver-1", "secret": "app-token-x7k2p" are credwatch's
		// own fields; a dockerconfig's "auth" is base64 of user:password.
		ok = basicCredential(s[vs:ve])
	}
	return vs, ve, ok && (eq || !proseKey(s, ks))
}

// keyWordsIn says which key words key, which starts at s[ks], holds (ignoring ASCII case) that
// a scan for the word would look at (ks is at or after skip's entry for it), and whether any.
func keyWordsIn(key string, ks int, skip *[len(keyWords)]int) (words [len(keyWords)]bool, any bool) {
	for i := 0; i < len(key); i++ {
		var ws []int // the key words starting with key[i]
		switch key[i] | 0x20 {
		case 'p':
			ws = pWords[:]
		case 's':
			ws = sWords[:]
		case 't':
			ws = tWords[:]
		case 'a':
			ws = aWords[:]
		case 'k':
			ws = kWords[:]
		default:
			continue
		}
		for _, k := range ws {
			if w := keyWords[k]; ks >= skip[k] && hasPrefixFold(key[i:], w) {
				words[k], any = true, true
			}
		}
	}
	return words, any
}

// The key words by first letter, as indexes into keyWords.
var (
	pWords = [...]int{0, 1}
	sWords = [...]int{2, 7}
	tWords = [...]int{3}
	aWords = [...]int{4, 5}
	kWords = [...]int{6}
)

// seps finds the bytes a separator starts with ('=', ':' and '%'), left to right, each by
// IndexByte, remembering where the next of each is.
type seps struct {
	s  string
	at [3]int // the next '=', ':' and '%' from where the search is; len(s) when there is none
	i  int
}

var sepBytes = [3]byte{'=', ':', '%'}

func (f *seps) init(s string) {
	f.s, f.i = s, 0
	for k := range f.at {
		f.at[k] = -1
	}
}

// next is the next separator byte's index, or -1.
func (f *seps) next() int {
	j := len(f.s)
	for k, c := range sepBytes {
		if f.at[k] < f.i {
			f.at[k] = indexFrom(f.s, c, f.i)
		}
		j = min(j, f.at[k])
	}
	if j >= len(f.s) {
		return -1
	}
	f.i = j + 1
	return j
}

// sepAt says whether a separator follows a key that ends at s[i], after an optional quote and
// blanks: valueSpan's cheap first step.
func sepAt(s string, i int) bool {
	i += len(quoteAt(s, i))
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i < len(s) && (s[i] == '=' || s[i] == ':' || s[i] == '%' && (hasPrefixFold(s[i:], "%3d") || hasPrefixFold(s[i:], "%3a")))
}

// proseKey says whether the key at s[ks:], followed by ':', is a resource name in prose: after a
// '/' (kube-system/vsphere-cloud-secret: …) or after the word Secret ("Secret
// vsphere-cloud-secret: …").
func proseKey(s string, ks int) bool {
	if ks > 0 && s[ks-1] == '/' {
		return true
	}
	before := strings.TrimRight(s[:ks], " \t")
	if len(before) == ks {
		return false
	}
	before = strings.TrimSuffix(before, "s")
	return len(before) >= 6 && strings.EqualFold(before[len(before)-6:], "secret")
}

// quotes are the spellings of a quote around a key or a value: raw, escaped in a JSON or Go
// string, percent-encoded, HTML-escaped.
var quotes = []string{`\"`, `"`, `'`, "%22", `\u0022`, "&quot;", "&#34;", "&#39;"}

// quoteStart is the first bytes of quotes, by byte.
var quoteStart = func() (t [256]bool) {
	for _, q := range quotes {
		t[q[0]] = true
	}
	return t
}()

// quoteAt is the quote at s[i:], or "".
func quoteAt(s string, i int) string {
	if i >= len(s) || !quoteStart[s[i]] {
		return ""
	}
	for _, q := range quotes {
		if hasPrefixFold(s[i:], q) {
			return s[i : i+len(q)]
		}
	}
	return ""
}

// valueSpan finds the value after a key that ends at s[i]: an optional closing quote, a separator
// ('=' or ':', also percent-encoded), then a quoted value (to its closing quote or the line's
// end) or a bare one (to a space or a delimiter). A weak key needs '=' or a quoted key; a
// structured value ({…}, […]) and one already redacted are not values. eq is whether the
// separator was '='.
func valueSpan(s string, i int, weak bool) (vs, ve int, eq, ok bool) {
	keyQuote := quoteAt(s, i)
	i += len(keyQuote)
	i = skipBlanks(s, i, false)
	pct := keyQuote == "%22"
	switch {
	case i < len(s) && (s[i] == '=' || s[i] == ':'):
		eq = s[i] == '='
		i++
	case hasPrefixFold(s[i:], "%3d") || hasPrefixFold(s[i:], "%3a"):
		eq, pct = s[i+2] == 'd' || s[i+2] == 'D', true
		i += 3
	default:
		return 0, 0, false, false
	}
	if weak && !eq && keyQuote == "" {
		return 0, 0, false, false
	}
	if i < len(s) && s[i] == '=' { // "==", a comparison
		return 0, 0, false, false
	}
	i = skipBlanks(s, i, pct)
	folded := false
	if i < len(s) && s[i] == '\n' && (eq || !weak) {
		// A YAML printer folds a long line at a space: the value may start the next line.
		i, folded = skipBlanks(s, i+1, false), true
	}
	if i+1 < len(s) && (s[i] == '[' || s[i] == '{' && !structStart(s[i+1])) {
		// A list of one value (an http.Header in JSON or Go) or a value in braces (Go's %v):
		// the bracket is not the secret's.
		i++
	}
	if q := quoteAt(s, i); q != "" {
		vs = i + len(q)
		ve = vs
		for ve < len(s) && s[ve] != '\n' && !(hasPrefixFold(s[ve:], q) && (q != `"` || s[ve-1] != '\\')) {
			ve++
		}
		return vs, ve, eq, ve > vs && !strings.HasPrefix(s[vs:ve], Marker)
	}
	vs, ve = i, i
	for ve < len(s) && !bareEnd(s, ve, pct) {
		ve++
	}
	if ve == vs || s[vs] == '{' || s[vs] == '[' || strings.Contains(s[vs:ve], Marker) {
		return 0, 0, false, false
	}
	if folded && (s[ve-1] == ':' || s[vs] == '-' || s[vs] == '#') {
		return 0, 0, false, false // the next line is a YAML key, list item or comment of its own
	}
	return vs, ve, eq, true
}

// structStart says whether c, after a '{', starts a structured value (a JSON or YAML object).
func structStart(c byte) bool { return c <= ' ' || strings.IndexByte(`"'\}`, c) >= 0 }

// bareEnd says whether a bare value ends at s[i]: a space, a delimiter, or, in a percent-encoded
// text, an encoded delimiter.
func bareEnd(s string, i int, pct bool) bool {
	c := s[i]
	if c <= ' ' || strings.IndexByte(",;&)}]\"'\\<>", c) >= 0 {
		return true
	}
	if c == '%' && pct && i+2 < len(s) {
		switch strings.ToUpper(s[i+1 : i+3]) {
		case "22", "26", "27", "2C", "3B", "20", "7D", "5D", "0A", "3C":
			return true
		}
	}
	return false
}

// skipBlanks skips spaces and tabs (and, percent-encoded, %20 and '+').
func skipBlanks(s string, i int, pct bool) int {
	for i < len(s) {
		switch {
		case s[i] == ' ' || s[i] == '\t':
			i++
		case pct && s[i] == '+':
			i++
		case pct && strings.HasPrefix(s[i:], "%20"):
			i += 3
		default:
			return i
		}
	}
	return i
}

// hasSuffixFold is strings.HasSuffix ignoring ASCII case, for an ASCII suffix.
func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && equalFoldASCII(s[len(s)-len(suffix):], suffix)
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII case, for an ASCII prefix.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && equalFoldASCII(s[:len(prefix)], prefix)
}

// equalFoldASCII is strings.EqualFold for an ASCII b (no other byte folds to an ASCII one in as
// many bytes), from the last byte, where the suffixes of classify differ, without its call
// cost: classify tries two dozen suffixes on every key.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := len(a) - 1; i >= 0; i-- {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

// keyByte is the bytes of a key name, by byte.
var keyByte = func() (t [256]bool) {
	for c := range t {
		t[c] = isRunByte(byte(c))
	}
	return t
}()

// yamlKey says whether the key at s[ks] starts a YAML line (after indentation and a list's
// "- ", also in a log line that escapes its line breaks) or a flow mapping ("{token: …}").
func yamlKey(s string, ks int) bool {
	i := ks
	for i > 0 && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	if i > 0 && s[i-1] == '-' {
		for i--; i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'); i-- {
		}
	}
	return i == 0 || s[i-1] == '\n' || s[i-1] == '{' || i > 1 && s[i-2:i] == `\n`
}

// authorizationValue is the span of the credentials after an Authorization key that ends at
// s[i], in any scheme: "Negotiate YII…", "AWS4-HMAC-SHA256 Credential=…, Signature=…",
// "Digest username=…, response=…", a bare token. The scheme stays; "Authorization: denied" and
// a value AuthValues took already are none.
func authorizationValue(s string, i int) (vs, ve int, ok bool) {
	keyQuote := quoteAt(s, i)
	i = skipBlanks(s, i+len(keyQuote), false)
	pct := keyQuote == "%22"
	switch {
	case i < len(s) && (s[i] == '=' || s[i] == ':'):
		i++
	case hasPrefixFold(s[i:], "%3d") || hasPrefixFold(s[i:], "%3a"):
		i, pct = i+3, true
	default:
		return 0, 0, false
	}
	i = skipBlanks(s, i, pct)
	if i < len(s) && s[i] == '[' {
		i++
	}
	q := quoteAt(s, i)
	i += len(q)
	// The scheme, then blanks, then the credentials; or one word, the credential itself.
	se := i
	for se < len(s) && credByte[s[se]] && s[se] != '=' {
		se++
	}
	if se == i {
		return 0, 0, false
	}
	vs = skipBlanks(s, se, pct)
	if vs == se || vs >= len(s) || !credByte[s[vs]] {
		return i, se, opaqueToken(s[i:se]) && !strings.Contains(s[i:se], Marker)
	}
	ve = vs
scan:
	for ve < len(s) {
		c := s[ve]
		switch {
		case q != "" && hasPrefixFold(s[ve:], q) && (q != `"` || s[ve-1] != '\\'):
			break scan
		case pct && c == '%' && bareEnd(s, ve, true):
			break scan
		case credByte[c] || c == '%' || c == '"' || q != "" && c != '\n':
			ve++
		case c == ',':
			// a parameter list: "Credential=…, Signature=…"
			j := skipBlanks(s, ve+1, false)
			if j >= len(s) || !credByte[s[j]] {
				break scan
			}
			ve = j
		default:
			break scan
		}
	}
	for ve > vs && (s[ve-1] == ',' || s[ve-1] == '"') {
		ve--
	}
	v := s[vs:ve]
	if v == "" || strings.Contains(v, Marker) {
		return 0, 0, false
	}
	first := v
	if k := strings.IndexAny(v, ", "); k >= 0 {
		first = v[:k]
	}
	if opaqueToken(first) || strings.Contains(first, "=") {
		return vs, ve, true
	}
	// Not a scheme and its credentials: the first word may be the credential itself.
	return i, se, opaqueToken(s[i:se]) && !strings.Contains(s[i:se], Marker)
}
