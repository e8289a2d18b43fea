// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cause

import (
	"strings"

	"github.com/credwatch/credwatch/pkg/logs/internal/quoted"
)

// authError finds the error of an "Unable to authenticate the request" line in any era's form.
func authError(l Line) (string, bool) {
	msg := l.Msg
	i := strings.Index(msg, authMessage)
	if i < 0 {
		return "", false
	}
	if l.Err != "" {
		return l.Err, true
	}
	rest := msg[i+len(authMessage):]
	if j := strings.Index(rest, authUnstructuredInfix); j >= 0 {
		return rest[j+len(authUnstructuredInfix):], true
	}
	if j := strings.Index(rest, `err="`); j >= 0 {
		v, _, _ := quoted.Prefix(rest[j+4:])
		return v, true
	}
	if j := strings.Index(rest, `"err":"`); j >= 0 {
		v, _ := quoted.JSONField(rest[j:], "err")
		return v, true
	}
	// zap's console encoder: `Unable to authenticate the request	{"error": "[...]"}`.
	if j := strings.Index(rest, `"error": "`); j >= 0 {
		v, _, _ := quoted.Prefix(rest[j+len(`"error": `):])
		return v, true
	}
	// The message with no error after it: a klog or JSON line cut short is still an
	// authentication failure; in other text it is only a mention (a quoted copy, a document).
	return "", !l.Plain
}

// classifyAggregate splits an aggregate error and names each part; it caches by text.
func (c *Classifier) classifyAggregate(errText string, truncated bool) classified {
	if cl, ok := c.cache[errText]; ok && !truncated {
		return cl
	}
	raw, closed := splitAggregate(errText)
	cut := truncated || !closed
	var parts []Part
	for i := 0; i < len(raw); {
		j, p := c.longestJoin(raw, i)
		text := strings.Join(raw[i:j+1], ", ")
		part := Part{Text: text}
		last := j == len(raw)-1
		if p == nil && last && cut {
			p = c.m.best(text, modePrefix, causesOnly)
		}
		if p == nil {
			p = c.m.best(text, modeContains, causesOnly)
		}
		if p != nil {
			part.Cause, part.Spelling = p.cause, p.key
		}
		parts = append(parts, part)
		i = j + 1
	}
	cl := classified{parts: parts, primary: -1}
	if len(parts) > 1 {
		for k := range parts {
			if parts[k].Text == loopbackText {
				parts[k].Loopback, parts[k].Cause, parts[k].Spelling = true, "", ""
			}
		}
	}
	cl.primary = primaryPart(parts)
	if cl.primary < 0 {
		for k := range parts {
			if !parts[k].Loopback {
				parts[k].Cause = Unknown
				cl.primary = k
				break
			}
		}
	}
	if !cut {
		if len(c.cache) >= cacheLimit {
			clear(c.cache)
		}
		c.cache[errText] = cl
	}
	return cl
}

// longestJoin returns the last index j (i <= j < i+4) such that raw[i..j] joined with ", "
// is one catalogue message, preferring the longest; messages themselves contain ", "
// ("invalid signature, no keys found").
func (c *Classifier) longestJoin(raw []string, i int) (int, *pattern) {
	end := min(len(raw), i+4)
	for j := end - 1; j >= i; j-- {
		text := raw[i]
		if j > i {
			text = strings.Join(raw[i:j+1], ", ")
		}
		if p := c.anchoredBest(text); p != nil {
			return j, p
		}
	}
	return i, nil
}

// splitAggregate splits "[a, b, [c, d]]" into a, b, c, d (nested aggregates are flattened, as
// utilerrors does). closed is false when the outer bracket never closes (a cut-off line).
func splitAggregate(s string) (parts []string, closed bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") {
		if s == "" {
			return nil, true
		}
		return []string{s}, true
	}
	closed = strings.HasSuffix(s, "]") && balanced(s)
	inner := s[1:]
	if closed {
		inner = s[1 : len(s)-1]
	}
	depth, start := 0, 0
	emit := func(p string) {
		p = strings.TrimSpace(p)
		if strings.HasPrefix(p, "[") {
			sub, _ := splitAggregate(p)
			parts = append(parts, sub...)
			return
		}
		if p != "" {
			parts = append(parts, p)
		}
	}
	for k := 0; k < len(inner); k++ {
		switch inner[k] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 && k+1 < len(inner) && inner[k+1] == ' ' {
				emit(inner[start:k])
				start = k + 2
				k++
			}
		}
	}
	emit(inner[start:])
	return parts, closed
}

func balanced(s string) bool {
	d := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			d++
		case ']':
			d--
		}
	}
	return d == 0
}

// weakCauses are the causes a part names that another part's cause outranks: a legacy
// authenticator's claim complaint next to the bound-token authenticator's real error
// ("namespace claim is missing, service account UID (…) does not match claim (…)"), and generic
// failure markers.
var weakCauses = map[string]bool{"token-claims-invalid": true, Unknown: true}

// weakSpellings are parts another part's cause outranks although their cause is not weak: the
// jwt-go era (up to 1.9) service-account authenticator answered "crypto/rsa: verification error"
// for every RS256 token it did not sign, OIDC ID tokens included, so next to the OIDC
// authenticator's error it says nothing about the token.
var weakSpellings = map[[2]string]bool{{"signing-key-unknown", "rsa"}: true}

// weak reports whether another part's cause outranks p's.
func weak(p *Part) bool { return weakCauses[p.Cause] || weakSpellings[[2]string{p.Cause, p.Spelling}] }

// primaryPart is the first part naming a cause, preferring causes that are not weak; -1 if none.
func primaryPart(parts []Part) int {
	first := -1
	for k := range parts {
		if parts[k].Loopback || parts[k].Cause == "" {
			continue
		}
		if !weak(&parts[k]) {
			return k
		}
		if first < 0 {
			first = k
		}
	}
	return first
}
