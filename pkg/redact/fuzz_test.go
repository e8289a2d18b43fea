// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf8"

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
		// Only the secret's span changes: no neighbouring byte goes with it.
		if enc%redacttest.Encodings == 0 && utf8.RuneCountInString(pw) >= MinSecretLen && got != before+Marker+after {
			t.Fatalf("Secret(%q, %q) = %q, want %q", in, pw, got, before+Marker+after)
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

// plantings spell a secret value v in every credential spelling Text knows (issue #20); Text must
// take v out of each, whatever surrounds it.
var plantings = []func(v string) string{
	func(v string) string { return "https://admin:" + v + "@vcenter.example/sdk" },
	func(v string) string { return "X-Auth-Token: " + v },
	func(v string) string { return "Authorization: Bearer " + v },
	func(v string) string { return "token=" + v },
	func(v string) string { return `{"access_token":"` + v + `"}` },
	func(v string) string { return "api_key=" + v },
	func(v string) string { return "apikey: " + v },
	func(v string) string { return "secret=" + v },
	func(v string) string { return "pwd=" + v },
	func(v string) string { return "pass=" + v },
	func(v string) string { return "aws_secret_access_key = " + v },
	func(v string) string { return "secretKey: " + v },
	func(v string) string { return "password=" + v },
	func(v string) string { return `err="{\"client_secret\":\"` + v + `\"}"` },
	func(v string) string { return "<password>" + v + "</password>" },
	func(v string) string { return "&lt;ns:token&gt;" + v + "&lt;/ns:token&gt;" },
	func(v string) string { return "password%3D" + v },
	func(v string) string { return "%22password%22%3A%22" + v + "%22" },
	// issue 37
	func(v string) string { return "X-Vault-Token: " + v },
	func(v string) string { return `"X-Amz-Security-Token":["` + v + `"]` },
	func(v string) string { return "Authorization: Negotiate " + v },
	func(v string) string { return "Authorization: " + v },
	func(v string) string { return "Authorization: AWS4-HMAC-SHA256 Credential=AKIA/x, Signature=" + v },
	func(v string) string { return "\n    token: " + v },
	func(v string) string { return "\n  client-key-data: " + v },
	func(v string) string { return "hvs." + v },
	func(v string) string { return "ghp_" + v },
	func(v string) string { return "github_pat_" + v },
	func(v string) string { return "xoxb-" + v },
	func(v string) string { return "ya29." + v },
	func(v string) string { return "AccountName=a;AccountKey=" + v + ";EndpointSuffix=x" },
	func(v string) string { return "?sv=1&sig=" + v },
	func(v string) string { return " --token P" + v },
	func(v string) string { return " --password 'P" + v + "'" },
	func(v string) string { return " -p P" + v },
	func(v string) string { return " -u user:" + v },
	func(v string) string { return "Authorization%3A%20Bearer%20" + v },
	func(v string) string { return "X-Vault-Token%3A%20" + v },
	func(v string) string {
		return "-----BEGIN PGP PRIVATE KEY BLOCK-----\n" + v + "\n-----END PGP PRIVATE KEY BLOCK-----"
	},
	func(v string) string { return "\n" + redacttest.KeyLine(v) + "\n" },
}

// FuzzSpellings: a value planted in any credential spelling, between any two strings, never
// survives Text. Values are base64url (as tokens and generated passwords are), so no character
// of theirs ends a bare value early.
func FuzzSpellings(f *testing.F) {
	for i := range plantings {
		f.Add("login failed: ", " next", []byte("v"), uint8(i))
	}
	f.Add("", "", []byte{0xff}, uint8(3))
	f.Add("x=", "&y=1", []byte("q"), uint8(16))
	f.Fuzz(func(t *testing.T, before, after string, seed []byte, which uint8) {
		v := redacttest.Marker(seed, 20)
		before, after = redacttest.Scrub(before), redacttest.Scrub(after)
		if !separated(before) {
			return
		}
		in := before + plantings[int(which)%len(plantings)](v) + after
		std := strings.NewReplacer("-", "+", "_", "/").Replace(v) // as KeyLine spells it
		if got := Text(in); strings.Contains(got, v) || strings.Contains(got, std) {
			t.Fatalf("Text(%q) = %q: the value survived", in, got)
		}
	})
}

// separated says whether before leaves a planted spelling standing on its own: a letter glued
// to "token=" makes another key ("atoken" is not one), a '/' or the word Secret before a key
// makes it a resource name in prose.
func separated(before string) bool {
	return before == "" || !keyByte[before[len(before)-1]] && before[len(before)-1] != '/' && !strings.HasSuffix(strings.TrimRight(before, " \t"), "ecret")
}

// FuzzJWTSpellings: a JWS's signature never survives Text in any of the spellings Tokens and
// Wrapped know: dots as %2E or \u002e, inside standard base64, broken over two lines.
func FuzzJWTSpellings(f *testing.F) {
	for i := 0; i < 5; i++ {
		f.Add("id_token=", "&state=1", []byte("s"), uint8(i), uint8(40))
	}
	f.Fuzz(func(t *testing.T, before, after string, key []byte, spelling, cut uint8) {
		sig := redacttest.Marker(key, 32)
		tok := redacttest.JWS(sig)
		switch spelling % 5 {
		case 0:
			tok = strings.ReplaceAll(tok, ".", "%2E")
		case 1:
			tok = strings.ReplaceAll(tok, ".", `\u002e`)
		case 2:
			tok = base64.StdEncoding.EncodeToString([]byte("robot:" + tok))
			sig = tok[len(tok)-24:]
		case 3, 4:
			// broken after the header's dot, anywhere up to its last 8 characters
			head := strings.Index(tok, ".") + 1
			at := head + int(cut)%(len(tok)-head-8)
			brk := "\n"
			if spelling%5 == 4 {
				brk = `\n`
			}
			sig = tok[at:]
			if len(sig) > 24 {
				sig = sig[len(sig)-24:]
			}
			tok = tok[:at] + brk + tok[at:]
		}
		before, after = redacttest.Scrub(before), redacttest.Scrub(after)
		if before != "" && runByte[before[len(before)-1]] || after != "" && (runByte[after[0]] || after[0] == '=' || after[0] == '+' || after[0] == '/') {
			return // glued to the token, the text is another run
		}
		in := before + tok + after
		if got := Text(in); strings.Contains(got, sig) {
			t.Fatalf("Text(%q) = %q: the signature survived", in, got)
		}
	})
}

// FuzzBenign: a benign line (testdata/benign.txt) stays byte-identical between any two words
// of ordinary prose; the seeds are the corpus itself.
func FuzzBenign(f *testing.F) {
	lines := benignLines(f)
	for i := range lines {
		f.Add(uint16(i), "")
	}
	f.Fuzz(func(t *testing.T, i uint16, word string) {
		word = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' {
				return r
			}
			return -1
		}, word)
		in := lines[int(i)%len(lines)] + " " + word
		if got := Text(in); got != in {
			t.Fatalf("Text(%q) = %q, want it unchanged", in, got)
		}
	})
}
