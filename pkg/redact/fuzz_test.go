package redact

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/redact/redacttest"
)

// FuzzTokens: a JWS or JWE planted between any two strings never keeps its signature (or
// ciphertext), whatever surrounds it.
func FuzzTokens(f *testing.F) {
	f.Add("token=", ".", []byte("signature"), false)
	f.Add("Bearer ", "\", next", []byte{0xff, 0, 1}, true)
	f.Add("x.", "..y", []byte("s"), false)
	f.Fuzz(func(t *testing.T, before, after string, key []byte, jwe bool) {
		sig := redacttest.Marker(key, 24)
		tok := redacttest.JWS(sig)
		if jwe {
			tok = redacttest.JWE(sig)
		}
		before, after = redacttest.Scrub(before), redacttest.Scrub(after)
		got := Tokens(before + tok + after)
		if leak := redacttest.Leak(got, sig); leak != "" {
			t.Fatalf("Tokens(%q) = %q: the signature survived (%s)", before+tok+after, got, leak)
		}
	})
}

// FuzzSecret: a password planted in any spelling, anywhere, never survives Secret, however
// short; the password is made of runes no other text contains, so any survival is a leak.
func FuzzSecret(f *testing.F) {
	f.Add("login failed: ", ".", []byte{1}, uint8(0))
	f.Add("<password>", "</password>", []byte("abcdef"), uint8(2))
	f.Add("?password=", "&x=1", []byte{9, 8, 7, 6, 5}, uint8(3))
	f.Fuzz(func(t *testing.T, before, after string, seed []byte, enc uint8) {
		pw := redacttest.Password(seed)
		before, after = redacttest.Scrub(before), redacttest.Scrub(after)
		in := before + redacttest.Encode(pw, enc) + after
		got := Secret(in, pw)
		if leak := redacttest.Leak(got, pw); leak != "" {
			t.Fatalf("Secret(%q, %q) = %q: %s", in, pw, got, leak)
		}
	})
}

// FuzzPrivateKeys: a planted PEM private key's body never survives Text.
func FuzzPrivateKeys(f *testing.F) {
	f.Add("key: ", "\n", []byte("k"), "RSA ", true)
	f.Fuzz(func(t *testing.T, before, after string, seed []byte, kind string, terminated bool) {
		body := base64.StdEncoding.EncodeToString([]byte(redacttest.Marker(seed, 40)))
		kind = strings.Map(func(r rune) rune {
			if r >= 'A' && r <= 'Z' || r == ' ' {
				return r
			}
			return -1
		}, kind)
		pem := "-----BEGIN " + kind + "PRIVATE KEY-----\n" + body
		if terminated {
			pem += "\n-----END " + kind + "PRIVATE KEY-----"
		}
		before, after = redacttest.Scrub(before), redacttest.Scrub(after)
		if got := Text(before + pem + after); strings.Contains(got, body) {
			t.Fatalf("Text(%q) = %q: the key survived", before+pem+after, got)
		}
	})
}
