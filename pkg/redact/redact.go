// Package redact is credwatch's one place that takes secrets out of text: the signature (and,
// for JWE, everything after the header) of any JOSE compact token, PEM private keys, and a known
// password in any of the spellings an error message may carry it in (raw, percent-, XML-, JSON-
// or Go-escaped). Every printer and the logs evidence path call it; nothing else redacts.
package redact

import (
	"encoding/base64"
	"regexp"
	"strings"
)

// Marker replaces what was taken out.
const Marker = "REDACTED"

// Withheld replaces a whole message that contains a secret too short to cut out of it without
// mangling ordinary words.
const Withheld = "(message withheld: it contains the password, which is too short to redact from it)"

// MinSecretLen is the length (in runes) from which a secret is cut out of a message; shorter
// secrets withhold the whole message instead.
const MinSecretLen = 4

// Text removes what needs no outside knowledge to find: token signatures, private keys, and
// the values of password and secret keys (`password=…`, `"client_secret": "…"`).
func Text(s string) string { return KeyValues(PrivateKeys(Tokens(s))) }

// Tokens keeps the header (and a JWS's JSON payload) of every JOSE compact token in s and
// replaces the rest with Marker: a run of base64url segments joined by dots, at least three of
// them, whose first segment decodes to a JSON header naming "alg". Whatever character follows
// the run (a full stop, a comma, a quote) plays no part, and runs of any length (JWS has 3
// segments, JWE 5) are cut after the header, so no signature or ciphertext survives.
func Tokens(s string) string {
	if !strings.Contains(s, "e") || strings.Count(s, ".") < 2 {
		return s
	}
	// Only a run with a dot can hold a token: the runs are found around the dots, which
	// IndexByte finds fast (a printed report is megabytes of text with few of them).
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		d := strings.IndexByte(s[i:], '.')
		if d < 0 {
			break
		}
		lo, hi := i+d, i+d+1
		for lo > i && runByte[s[lo-1]] { // s[i-1], if any, ends the previous run
			lo--
		}
		for hi < len(s) && runByte[s[hi]] {
			hi++
		}
		if r, ok := redactRun(s[lo:hi]); ok {
			b.WriteString(s[last:lo])
			b.WriteString(r)
			last = hi
		}
		i = hi
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// redactRun redacts one run of [A-Za-z0-9_.-]; ok is false when it holds no token.
func redactRun(run string) (string, bool) {
	// A token has three segments, and a header starts "ey" or "ew" (isHeader): most runs are
	// words, numbers or names, told apart here without splitting them.
	if strings.Count(run, ".") < 2 || !strings.Contains(run, "ey") && !strings.Contains(run, "ew") {
		return run, false
	}
	segs := strings.Split(run, ".")
	for k := 0; k+2 < len(segs); k++ {
		prefix, hdr, ok := splitHeader(segs[k])
		if !ok {
			continue
		}
		keep := append(append([]string{}, segs[:k]...), prefix+hdr)
		rest := segs[k+1:]
		if strings.HasPrefix(rest[0], "eyJ") { // a JWS's JSON claims: not secret, and useful
			keep, rest = append(keep, rest[0]), rest[1:]
		}
		// A token ends at its last non-empty segment; trailing dots are the sentence's.
		trail := 0
		for trail < len(rest) && rest[len(rest)-1-trail] == "" {
			trail++
		}
		return strings.Join(keep, ".") + "." + Marker + strings.Repeat(".", trail), true
	}
	return run, false
}

// splitHeader finds a JOSE header in seg, also behind other base64url characters glued to it
// ("token" + "eyJ...").
func splitHeader(seg string) (prefix, hdr string, ok bool) {
	if isHeader(seg) {
		return "", seg, true
	}
	for i := 1; i < len(seg); i++ {
		j := strings.Index(seg[i:], "eyJ")
		if j < 0 {
			break
		}
		i += j
		if isHeader(seg[i:]) {
			return seg[:i], seg[i:], true
		}
	}
	return "", seg, false
}

// isHeader says whether seg is the base64url of a JOSE header: a JSON object naming "alg".
func isHeader(seg string) bool {
	// '{' then '"', ' ' or a control character spells "ey" or "ew": most words fail here.
	if len(seg) < 8 || seg[0] != 'e' || seg[1] != 'y' && seg[1] != 'w' {
		return false
	}
	if len(seg)%4 == 1 {
		seg = seg[:len(seg)-1]
	}
	d, err := base64.RawURLEncoding.DecodeString(seg)
	return err == nil && len(d) > 0 && d[0] == '{' && strings.Contains(string(d), `"alg"`)
}

func isRunByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

// runByte is isRunByte by byte.
var runByte = func() (t [256]bool) {
	for c := range t {
		t[c] = isRunByte(byte(c))
	}
	return t
}()

var pemKeyRE = regexp.MustCompile(`(?s)-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`)

// PrivateKeys replaces the body of every PEM private key block (also an unterminated one, to the
// end of s) with Marker.
func PrivateKeys(s string) string {
	if !strings.Contains(s, "PRIVATE KEY-----") {
		return s
	}
	return pemKeyRE.ReplaceAllString(s, "-----BEGIN ${1}PRIVATE KEY----- "+Marker+" -----END ${1}PRIVATE KEY-----")
}

// keyValueRE finds a key ending in password or passwd, or in a qualified secret (client_secret,
// application-credential-secret, clientSecret: not a bare "secret", which in Kubernetes names a
// Secret), its separator on the same line, and its value: quoted (also with JSON-escaped quotes),
// or bare up to a space or a delimiter.
var keyValueRE = regexp.MustCompile(`([A-Za-z0-9_.-]*(?:(?i:passw(?:or)?d)|[_-](?i:secret)|[a-z0-9]Secret)\\?["']?[ \t]*[:=][ \t]*)(\\?"[^"\n]*"?|'[^'\n]*'?|[^\s,;&)}\]"'\\]+)`)

// KeyValues replaces the value of every password or secret key in s with Marker.
func KeyValues(s string) string {
	if !containsFold(s, "pass") && !containsFold(s, "secret") {
		return s
	}
	return keyValueRE.ReplaceAllString(s, "${1}"+Marker)
}

// containsFold is strings.Contains for a sub of lower-case ASCII letters, ignoring ASCII case,
// without allocating: most lines hold neither word. It compares where sub's first letter is, in
// either case, found with IndexByte (a printed report is megabytes long).
func containsFold(s, sub string) bool {
	n := len(s) - len(sub) + 1 // positions sub may start at
	if n <= 0 {
		return false
	}
	lo, up := sub[0], sub[0]-0x20
	nextLo, nextUp := -1, -1 // the next position of each, from i on; n when there is none
	for i := 0; i < n; {
		if nextLo < i {
			nextLo = indexFrom(s[:n], lo, i)
		}
		if nextUp < i {
			nextUp = indexFrom(s[:n], up, i)
		}
		j := min(nextLo, nextUp)
		if j >= n {
			return false
		}
		k := 1
		for k < len(sub) && s[j+k]|0x20 == sub[k] {
			k++
		}
		if k == len(sub) {
			return true
		}
		i = j + 1
	}
	return false
}

// indexFrom is the index of c in s from i on, or len(s).
func indexFrom(s string, c byte, i int) int {
	if j := strings.IndexByte(s[i:], c); j >= 0 {
		return i + j
	}
	return len(s)
}
