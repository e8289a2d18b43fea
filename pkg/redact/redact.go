// Package redact is credwatch's one place that takes secrets out of text. Every byte that leaves
// the process passes through it: app.Main wraps stdout and stderr in a Writer, report.Print and
// the files of --report and --html write through one, and the logs evidence path calls Text.
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
//     pass, pwd and auth only with '=' or a quoted key, since in Kubernetes prose "Secret
//     kube-system/x" and "token: expired" are not values;
//   - URL userinfo passwords (https://user:REDACTED@host: the user stays);
//   - Authorization values: "Basic <base64 of user:password>" and opaque "Bearer <value>";
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
	return XMLValues(KeyValues(AuthValues(UserInfo(Wrapped(PrivateKeys(Tokens(s)))))))
}

var pemKeyRE = regexp.MustCompile(`(?s)-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`)

// PrivateKeys replaces the body of every PEM private key block (also an unterminated one, to the
// end of s) with Marker.
func PrivateKeys(s string) string {
	if !strings.Contains(s, "PRIVATE KEY-----") {
		return s
	}
	return pemKeyRE.ReplaceAllString(s, "-----BEGIN ${1}PRIVATE KEY----- "+Marker+" -----END ${1}PRIVATE KEY-----")
}

// containsFold is strings.Contains for a lower-case ASCII sub that starts with a letter, ignoring ASCII case,
// without allocating: most lines hold neither word. It compares where sub's first letter is, in
// either case, found with IndexByte (a printed report is megabytes long).
func containsFold(s, sub string) bool { return indexFold(s, sub) >= 0 }

// indexFold is the index of the first sub (lower-case ASCII letters) in s ignoring ASCII case, or
// -1; containsFold's search.
func indexFold(s, sub string) int {
	n := len(s) - len(sub) + 1 // positions sub may start at
	if n <= 0 {
		return -1
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
			return -1
		}
		k := 1
		for k < len(sub) && lowerASCII(s[j+k]) == sub[k] {
			k++
		}
		if k == len(sub) {
			return j
		}
		i = j + 1
	}
	return -1
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
