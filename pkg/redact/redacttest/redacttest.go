// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package redacttest plants secrets for the "no secret in any output" fuzz properties and finds
// them again, in any spelling. Passwords are made of marker runes (Cyrillic capitals) that no
// other text in credwatch's output contains, so even a one-character password is asserted
// without false positives: any marker rune in an output, raw or escaped, is a leak.
package redacttest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"net/url"
	"strconv"
	"strings"
)

// MarkerRunes never occur in credwatch's own text.
const MarkerRunes = "ЖЩЮЯ"

// passwordRunes are what planted passwords are made of: marker runes, and characters every
// escaping scheme rewrites.
const passwordRunes = MarkerRunes + MarkerRunes + `<>&"' %+;#\`

// Password derives a password of 1 to 8 runes from seed; its first rune is a marker rune.
func Password(seed []byte) string {
	n := 1
	if len(seed) > 0 {
		n = 1 + int(seed[0])%8
	}
	alpha := []rune(passwordRunes)
	h := sha256.Sum256(seed)
	out := []rune{[]rune(MarkerRunes)[h[0]%4]}
	for i := 1; i < n; i++ {
		out = append(out, alpha[int(h[i])%len(alpha)])
	}
	return string(out)
}

// Word derives a password of 1 to 8 marker runes from seed: one with no character that could
// end a bare value (for planting as key=value in a log line).
func Word(seed []byte) string {
	h := sha256.Sum256(append([]byte("word"), seed...))
	alpha := []rune(MarkerRunes)
	out := make([]rune, 1+int(h[0])%8)
	for i := range out {
		out[i] = alpha[int(h[i+1])%len(alpha)]
	}
	return string(out)
}

// Marker derives a base64url string of n characters from seed (n ≤ 43): a token signature or a
// key body that appears nowhere else.
func Marker(seed []byte, n int) string {
	h := sha256.Sum256(append([]byte("credwatch-marker"), seed...))
	return base64.RawURLEncoding.EncodeToString(h[:])[:n]
}

const (
	jwsHeader = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0"                                        // {"alg":"RS256","kid":"k1"}
	claims    = "eyJpc3MiOiJodHRwczovL2t1YmVybmV0ZXMuZGVmYXVsdC5zdmMiLCJzdWIiOiJzeXN0ZW0ifQ" // {"iss":...,"sub":"system"}
	jweHeader = "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ"                             // {"alg":"RSA-OAEP","enc":"A256GCM"}
)

// JWS is a compact JWS whose signature is sig.
func JWS(sig string) string { return jwsHeader + "." + claims + "." + sig }

// JWE is a compact JWE whose ciphertext is ct.
func JWE(ct string) string { return jweHeader + ".ZW5jcnlwdGVka2V5.aXZpdml2." + ct + ".dGFndGFn" }

// PEM is a PEM private key block whose body is body.
func PEM(body string) string {
	return "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----"
}

// KeyLine is a lone body line of a PEM private key (64 characters of standard base64) that
// carries marker, a Marker string, in standard base64's alphabet.
func KeyLine(marker string) string {
	line := "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + strings.NewReplacer("-", "+", "_", "/").Replace(marker)
	for len(line) < 64 {
		line += "Q"
	}
	return line
}

// Encodings is how many spellings Encode knows.
const Encodings = 9

// Encode spells s as an error message might: raw, XML-escaped (once or twice), HTML-escaped,
// percent-encoded, JSON- or Go-escaped.
func Encode(s string, enc uint8) string {
	switch enc % Encodings {
	case 1:
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(s))
		return b.String()
	case 2:
		return html.EscapeString(s)
	case 3:
		return url.QueryEscape(s)
	case 4:
		return url.PathEscape(s)
	case 5:
		b, _ := json.Marshal(s)
		return string(b[1 : len(b)-1])
	case 6:
		q := strconv.QuoteToASCII(s)
		return q[1 : len(q)-1]
	case 7:
		return html.EscapeString(html.EscapeString(s))
	case 8:
		return strings.NewReplacer("<", "&lt;", ">", "&gt;", "&", "&amp;", `"`, "&quot;", "'", "&apos;").Replace(s)
	}
	return s
}

// Scrub takes out of fuzzer-made text what could spell a marker rune, so the text around a
// planted secret cannot fake a leak.
func Scrub(s string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(MarkerRunes+strings.ToLower(MarkerRunes)+`%&#\`, r) {
			return -1
		}
		return r
	}, s)
}

// PasswordLeak says how out still carries a marker rune (so a planted password), or "".
func PasswordLeak(out string) string {
	low := strings.ToLower(out)
	for _, r := range MarkerRunes {
		raw := string(r)
		for _, form := range []string{raw, strings.ToLower(url.QueryEscape(raw)), fmt.Sprintf(`\u%04x`, r),
			fmt.Sprintf("&#%d;", r), fmt.Sprintf("&#x%x;", r)} {
			if strings.Contains(low, strings.ToLower(form)) {
				return fmt.Sprintf("marker rune %q found as %q", r, form)
			}
		}
	}
	return ""
}

// Leak says how out still carries secret: a password's marker rune, or the secret itself.
func Leak(out, secret string) string {
	if strings.ContainsAny(secret, MarkerRunes) {
		return PasswordLeak(out)
	}
	if strings.Contains(out, secret) {
		return "found verbatim"
	}
	return ""
}
