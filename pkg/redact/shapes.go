// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"strings"
)

// tokenPrefixes are the prefixes of credentials that say what they are by their first bytes:
// HashiCorp Vault (service, batch and recovery tokens), GitHub (personal, OAuth, app, user and
// refresh tokens, fine-grained PATs), Slack, Google OAuth access tokens and GitLab PATs. Each
// ends in '.', '_' or '-', which PrefixedTokens finds them by.
var tokenPrefixes = []string{"hvs.", "hvb.", "hvr.", "ya29.", "ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_",
	"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-", "glpat-"}

// minPrefixedLen is how many characters after its prefix make a prefixed run a credential:
// real ones have 20 to hundreds, and "ghp_x" in prose is a name.
const minPrefixedLen = 10

// PrefixedTokens replaces with Marker what follows the prefix of every bare credential whose
// prefix names it (hvs., ghp_, github_pat_, xoxb-, ya29., glpat-): ghp_REDACTED. It looks at
// the bytes the prefixes end in, each found by IndexByte, and back from there: no scan per
// prefix.
func PrefixedTokens(s string) string {
	var edits []edit
	var seps [3]int // the next '.', '_' and '-' from i on; len(s) when there is none
	for k := range seps {
		seps[k] = -1
	}
	for i := 0; i < len(s); {
		p := len(s)
		for k, c := range [3]byte{'.', '_', '-'} {
			if seps[k] < i {
				seps[k] = indexFrom(s, c, i)
			}
			p = min(p, seps[k])
		}
		if p >= len(s) {
			break
		}
		i = p + 1
		if !prefixLead(s, p) {
			continue
		}
		for _, pre := range tokenPrefixes {
			lo := p + 1 - len(pre)
			if pre[len(pre)-1] != s[p] || lo < 0 || s[lo:p+1] != pre || lo > 0 && alnum(s[lo-1]) {
				continue
			}
			ve := i
			for ve < len(s) && runByte[s[ve]] {
				ve++
			}
			for ve > i && s[ve-1] == '.' { // a sentence's full stop
				ve--
			}
			if ve-i >= minPrefixedLen && !strings.Contains(s[i:ve], Marker) {
				edits = append(edits, edit{i, ve, Marker})
				i = ve
			}
			break
		}
	}
	return apply(s, edits)
}

// prefixLead says whether a prefix of tokenPrefixes may end at s[p]: its first letter is where
// one would start (most separators are in names and numbers).
func prefixLead(s string, p int) bool {
	at := func(k int, c byte) bool { return p >= k && s[p-k] == c }
	return at(3, 'h') || at(3, 'g') || at(4, 'y') || at(4, 'x') || at(5, 'g') || at(10, 'g')
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }

// FlagValues replaces the value of a credential flag given as the next argument: --token VALUE,
// --password VALUE, --client-secret 'VALUE' (any flag whose name reads as a credential key),
// -p VALUE, and the password of -u/--user USER:PASSWORD (curl, wget). The form --flag=VALUE is
// KeyValues'.
func FlagValues(s string) string {
	var edits []edit
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '-')
		if j < 0 {
			break
		}
		p := i + j
		i = p + 1
		if p > 0 && !flagStart[s[p-1]] {
			continue // inside a word: kube-apiserver, 10-0-1
		}
		ns := p + 1
		if ns < len(s) && s[ns] == '-' {
			ns++
		}
		ne := ns
		for ne < len(s) && keyByte[s[ne]] {
			ne++
		}
		if ne == ns {
			continue
		}
		name := s[ns:ne]
		i = ne
		long := ns == p+2
		var userPass bool
		switch {
		case long && (name == "user" || name == "proxy-user"), !long && name == "u":
			userPass = true
		case !long && name == "p":
		case long && classify(name) != notKey:
		default:
			continue
		}
		vs, ve, ok := flagValue(s, ne)
		if !ok {
			continue
		}
		v := s[vs:ve]
		switch {
		case userPass:
			colon := strings.IndexByte(v, ':')
			if colon < 0 || colon+1 == len(v) {
				continue
			}
			vs += colon + 1
		case name == "p" && notPassword(v):
			continue
		}
		edits = append(edits, edit{vs, ve, Marker})
		i = ve
	}
	return apply(s, edits)
}

// flagStart is what may come before a flag: the start of an argument.
var flagStart = func() (t [256]bool) {
	for _, c := range " \t\n\"'[,(`=" {
		t[c] = true
	}
	return t
}()

// flagValue is the span of the argument after a flag that ends at s[i]: after blanks (or a
// closing and an opening quote, as in a JSON or YAML list of arguments), a quoted value to its
// quote, or a bare one to a blank or a delimiter. A next flag ('-…') or a value already
// redacted is none.
func flagValue(s string, i int) (vs, ve int, ok bool) {
	if i >= len(s) {
		return 0, 0, false
	}
	j := skipBlanks(s, i, false)
	if q := s[i]; q == '"' || q == '\'' { // "--token", "VALUE"
		j = i + 1
		if j < len(s) && s[j] == ',' {
			j++
		}
		if j = skipBlanks(s, j, false); j >= len(s) || s[j] != q {
			return 0, 0, false
		}
	} else if j == i || j >= len(s) {
		return 0, 0, false
	}
	if q := s[j]; q == '"' || q == '\'' {
		vs = j + 1
		if ve = strings.IndexByte(s[vs:], q); ve <= 0 {
			return 0, 0, false
		}
		ve += vs
	} else {
		vs, ve = j, j
		for ve < len(s) && !bareEnd(s, ve, false) {
			ve++
		}
	}
	v := s[vs:ve]
	if v == "" || v[0] == '-' || strings.Contains(v, Marker) {
		return 0, 0, false
	}
	return vs, ve, true
}

// notPassword says whether the value of a -p flag is something else that flag takes: a path
// (mkdir -p), a port or a port mapping (ssh -p 22, docker -p 8080:80), a variable.
func notPassword(v string) bool {
	if strings.IndexByte("/.~$", v[0]) >= 0 {
		return true
	}
	return strings.Trim(v, "0123456789.:/") == ""
}

// keyLineLen is the length of a PEM body line: a longer run of standard base64 out of its block
// is taken for a piece of a key.
const keyLineLen = 64

// KeyLines replaces every run of at least 64 standard base64 characters, with upper and lower
// case letters and a digit in it, that stands on its own (not inside a base64url or JOSE run,
// nor in a certificate's or a public key's PEM block): a private key's body line out of its
// block. What else credwatch prints that long has a '-', '_' or '.' next to it (a JWKS modulus,
// a token's claims), is hex, reads as a name (see mixed) or is a path (it starts with '/', as one
// key line in 64 does).
func KeyLines(s string) string {
	if len(s) < keyLineLen {
		return s
	}
	var edits []edit
	pemBlocks := strings.Contains(s, "-----BEGIN ")
	for i := 0; i+keyLineLen <= len(s); {
		j := i + keyLineLen - 1
		if !keyLineByte[s[j]] {
			i = j + 1 // no run of 64 starts at i..j
			continue
		}
		lo := j
		for lo > i && keyLineByte[s[lo-1]] {
			lo--
		}
		hi := j + 1
		for hi < len(s) && keyLineByte[s[hi]] {
			hi++
		}
		pad := hi
		for k := 0; k < 2 && pad < len(s) && s[pad] == '='; k++ {
			pad++
		}
		i = pad + 1
		if hi-lo < keyLineLen || s[lo] == '/' || glued(s, lo, pad) || !mixed(s[lo:hi]) || pemBlocks && inPublicBlock(s, lo) {
			continue
		}
		edits = append(edits, edit{lo, pad, Marker})
	}
	return apply(s, edits)
}

// keyLineByte is the standard base64 alphabet (without padding), by byte.
var keyLineByte = func() (t [256]bool) {
	for c := range t {
		t[c] = alnum(byte(c)) || c == '+' || c == '/'
	}
	return t
}()

// glued says whether the run s[lo:hi] continues a longer base64url or dotted run: a '-' or '_'
// next to it, or a '.' with more of the run behind it (a JOSE segment).
func glued(s string, lo, hi int) bool {
	if lo > 0 {
		if c := s[lo-1]; c == '-' || c == '_' || c == '.' && lo > 1 && runByte[s[lo-2]] {
			return true
		}
	}
	if hi < len(s) {
		if c := s[hi]; c == '-' || c == '_' || c == '.' && hi+1 < len(s) && runByte[s[hi+1]] {
			return true
		}
	}
	return false
}

// mixed says whether run reads like random base64 rather than a path or a name: 8 or more upper
// and lower case letters and 3 or more digits (a 64-character line of random base64 has 26, 26
// and 10 on average, and fewer than 3 digits one time in 600).
func mixed(run string) bool {
	var up, low, dig int
	for i := 0; i < len(run); i++ {
		switch c := run[i]; {
		case c >= 'A' && c <= 'Z':
			up++
		case c >= 'a' && c <= 'z':
			low++
		case c >= '0' && c <= '9':
			dig++
		}
	}
	return up >= 8 && low >= 8 && dig >= 3
}

// inPublicBlock says whether s[i] is inside a PEM block that is not a private key (a
// certificate, a public key): its last BEGIN before i is not one and no END follows it.
func inPublicBlock(s string, i int) bool {
	b := strings.LastIndex(s[:i], "-----BEGIN ")
	if b < 0 || strings.Contains(s[b:i], "-----END ") {
		return false
	}
	label := s[b+len("-----BEGIN ") : i]
	end := strings.Index(label, "-----")
	return end >= 0 && !strings.Contains(label[:end], "PRIVATE")
}
