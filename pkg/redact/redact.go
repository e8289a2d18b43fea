// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package redact is credwatch's one place that takes secrets out of text. Every byte that leaves
// the process passes through it: app.Main wraps stdout and stderr in a Writer, report.Print and
// the files of --report and --html write through one, and the logs evidence path calls Text
// (and BrokenTail, for a token broken over two of its lines).
//
// Text finds, with no outside knowledge:
//   - JOSE compact tokens (JWS, JWE): the header (and a JWS's JSON claims) stay, the signature or
//     ciphertext becomes REDACTED — also with dots spelt %2E or \u002e, a token broken over two
//     lines, and a token inside standard base64 (a dockerconfig, a kubeconfig blob), which is
//     replaced whole (as is a base64 PEM private key);
//   - PEM private key blocks, also unterminated;
//   - the values of credential keys, as key=value, key: value, "key": "value", in JSON-, Go-,
//     HTML- or percent-escaped quotes and separators (password%3Dx, %22password%22%3A%22x%22):
//     keys ending in password, passwd, passphrase, a qualified secret (client_secret, clientSecret,
//     application-credential-secret), secret_key, secretKey, aws_secret_access_key, api_key,
//     apikey, x-auth-token, access_token and other qualified tokens; the bare words secret, token,
//     pass, pwd and auth only with '=' (quoted, only a base64 user:password, as a dockerconfig's
//     "auth"), since "Secret kube-system/x" and "token: expired" in prose, and "secret":
//     "app-token-x7k2p" in credwatch's JSON, are not values;
//   - URL userinfo passwords (https://user:REDACTED@host: the user stays);
//   - Authorization values: "Basic <base64 of user:password>" and opaque "Bearer <value>", and
//     after an Authorization key the credentials of any scheme (Negotiate, AWS4-HMAC-SHA256);
//   - bare tokens whose prefix names them (hvs., ghp_, github_pat_, xoxb-, ya29., glpat-), the
//     value of a credential flag given as the next argument (--token VALUE, -p VALUE, the
//     password of -u USER:PASSWORD), OpenPGP private key blocks and a private key's PEM body
//     line out of its block (KeyLines);
//   - the content of XML elements named like a credential (<password>, <ns:secret>, <token>), also
//     HTML- or JSON-escaped.
//
// Only the secret span changes: ordinary text that mentions secret-like names (a
// vsphere-cloud-secret, secretRef, tokenRequest, passthrough) comes out byte-identical.
//
// Secret removes a password known in advance in any spelling an error message may carry it in
// (raw, percent-, XML-, JSON- or Go-escaped); Known is the per-process set of such secrets (the
// kubeconfig's bearer token and password) that a Writer also removes.
package redact

import (
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

// Text removes what needs no outside knowledge to find (see the package doc): token signatures,
// private keys, and the values of credential keys, URL passwords, Authorization headers and
// credential XML elements.
func Text(s string) string {
	s = KeyLines(Wrapped(PrivateKeys(Tokens(s))))
	return XMLValues(KeyValues(FlagValues(AuthValues(UserInfo(PrefixedTokens(s))))))
}

var pemKeyRE = regexp.MustCompile(`(?s)-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)`)

// PrivateKeys replaces the body of every PEM private key block and OpenPGP armored private key
// block (also an unterminated one, to the end of s) with Marker.
func PrivateKeys(s string) string {
	if !strings.Contains(s, "PRIVATE KEY") {
		return s
	}
	return pemKeyRE.ReplaceAllString(s, "-----BEGIN ${1}PRIVATE KEY${2}----- "+Marker+" -----END ${1}PRIVATE KEY${2}-----")
}

// containsFold is strings.Contains for a lower-case ASCII sub with a letter in it, ignoring
// ASCII case, without allocating: most lines hold none of the words. It compares where sub's
// rarest letter is, in either case, found with IndexByte (a printed report is megabytes long).
func containsFold(s, sub string) bool { return indexFold(s, sub) >= 0 }

// indexFold is the index of the first sub in s ignoring ASCII case, or -1; containsFold's search.
func indexFold(s, sub string) int { return newFolds(s, sub).next(0) }

// folds finds every sub in s ignoring ASCII case, left to right, remembering where the next of
// each case of sub's rarest letter is, so that neither is looked for twice.
type folds struct {
	s, sub         string
	t              string // t[j] is where sub's letter a is when sub starts at s[j]
	lo, up         byte
	nextLo, nextUp int // the next position of each in t, from where the search is; len(t) when there is none
}

func newFolds(s, sub string) *folds {
	f := &folds{s: s, sub: sub, nextLo: -1, nextUp: -1}
	n := len(s) - len(sub) + 1 // positions sub may start at
	if n <= 0 {
		return f
	}
	a := rarest(sub)
	f.t, f.lo, f.up = s[a:a+n], sub[a], sub[a]
	if c := sub[a]; c >= 'a' && c <= 'z' {
		f.up = c - 0x20
	}
	return f
}

// next is the index of the first sub at or after i, or -1.
func (f *folds) next(i int) int {
	n := len(f.t)
	for i < n {
		if f.nextLo < i {
			f.nextLo = indexFrom(f.t, f.lo, i)
		}
		if f.nextUp < i {
			f.nextUp = indexFrom(f.t, f.up, i)
		}
		j := min(f.nextLo, f.nextUp)
		if j >= n {
			return -1
		}
		k := 0
		for k < len(f.sub) && lowerASCII(f.s[j+k]) == f.sub[k] {
			k++
		}
		if k == len(f.sub) {
			return j
		}
		i = j + 1
	}
	return -1
}

// letterRank orders the lower-case letters from the most to the least frequent in English.
const letterRank = "etaoinshrdlcumwfgypbvkjxqz"

// rarest is the index of sub's least frequent letter (sub has one), or of its first byte that is
// no letter, such as the '%' of "%2e" (one case to find, and rarer than any letter in text).
func rarest(sub string) int {
	best, rank := 0, -1
	for i := 0; i < len(sub); i++ {
		if c := sub[i]; c < 'a' || c > 'z' {
			return i
		}
		if r := strings.IndexByte(letterRank, sub[i]); r > rank {
			best, rank = i, r
		}
	}
	return best
}

// lowerASCII is c in lower case, if an ASCII letter.
func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 0x20
	}
	return c
}

// indexFrom is the index of c in s from i on, or len(s).
func indexFrom(s string, c byte, i int) int {
	if j := strings.IndexByte(s[i:], c); j >= 0 {
		return i + j
	}
	return len(s)
}
