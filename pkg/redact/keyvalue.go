package redact

import (
	"strings"
)

// keyWords are what a credential key contains; KeyValues looks at a key only where one is.
var keyWords = []string{"pass", "pwd", "secret", "token", "api", "auth"}

// strongSuffixes end keys whose value is a credential after ':' as after '=' (lower case).
var strongSuffixes = []string{"password", "passwd", "passphrase", "secretkey", "secret_key", "secret-key",
	"secret_access_key", "secretaccesskey", "apikey", "api_key", "api-key", "auth-token", "auth_token", "authtoken",
	"access_token", "access-token", "accesstoken", "refresh_token", "refreshtoken", "id_token", "session_token",
	"sessiontoken", "bearer_token", "subject-token"}

// weakKeys are credential keys only with '=' (or, quoted, when the value is the base64 of
// user:password, as a dockerconfig's "auth"): in prose "token: expired" and "secret: not found"
// are messages, and in credwatch's JSON "token" and "secret" name things.
var weakKeys = []string{"secret", "token", "pass", "pwd", "auth"}

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
	key = strings.TrimLeft(key, "-")
	low := strings.ToLower(key)
	for _, suf := range strongSuffixes {
		if strings.HasSuffix(low, suf) {
			return strongKey
		}
	}
	for _, w := range weakKeys {
		if low == w {
			return weakKey
		}
		if len(low) <= len(w) || !strings.HasSuffix(low, w) {
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
func KeyValues(s string) string {
	var edits []edit
	for _, w := range keyWords {
		f := newFolds(s, w)
		for i := 0; i < len(s); {
			p := f.next(i)
			if p < 0 {
				break
			}
			ks, ke := p, p+len(w)
			for ks > 0 && keyByte[s[ks-1]] {
				ks--
			}
			for ke < len(s) && keyByte[s[ke]] {
				ke++
			}
			i = ke
			if !sepAt(s, ke) {
				continue // most mentions are words in prose or names
			}
			c := classify(s[ks:ke])
			if c == notKey {
				continue
			}
			vs, ve, eq, ok := valueSpan(s, ke, c == weakKey)
			if c == weakKey && !eq && ok {
				// "token": "minted through apiserver-1", "secret": "app-token-x7k2p" are
				// credwatch's own fields; a dockerconfig's "auth" is base64 of user:password.
				ok = basicCredential(s[vs:ve])
			}
			if ok && (eq || !proseKey(s, ks)) {
				edits = append(edits, edit{vs, ve, Marker})
				i = ve
			}
		}
	}
	return apply(s, edits)
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

// quoteAt is the quote at s[i:], or "".
func quoteAt(s string, i int) string {
	if i >= len(s) || !strings.ContainsRune(`\"'%&`, rune(s[i])) {
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

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// keyByte is the bytes of a key name, by byte.
var keyByte = func() (t [256]bool) {
	for c := range t {
		t[c] = isRunByte(byte(c))
	}
	return t
}()
