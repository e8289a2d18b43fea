// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cause

import (
	"strings"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// pattern is one catalogue message text compiled into literal segments; the %-verbs between
// them (%q, %s, %v, %d) are wildcards.
type pattern struct {
	cause    string // catalogue entry ID
	kind     string // cause or event
	key      string // message key
	since    string
	until    string
	text     string
	segs     []string // literal segments; a wildcard sits between two consecutive segments
	lead     bool     // the text starts with a wildcard
	trail    bool     // the text ends with a wildcard
	literal  int      // total literal length, the specificity of a match
	authOnly bool     // an error of the service-account authenticator: only inside "Unable to authenticate" lines
	yields   bool     // a frame that gives way to a named cause it wraps (catalogue.Message.Yields)
	order    int      // catalogue order, the tie-breaker
}

// compilePattern splits text on %-verbs. "%%" is a literal percent sign.
func compilePattern(text string) pattern {
	p := pattern{text: text}
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 || len(p.segs) == 0 {
			p.segs = append(p.segs, cur.String())
		}
		cur.Reset()
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '%' && i+1 < len(text) {
			n := text[i+1]
			if n == '%' {
				cur.WriteByte('%')
				i++
				continue
			}
			if strings.IndexByte("qsvdw", n) >= 0 {
				if i == 0 {
					p.lead = true
				}
				flush()
				i++
				if i == len(text)-1 {
					p.trail = true
				}
				continue
			}
		}
		cur.WriteByte(c)
	}
	if cur.Len() > 0 {
		p.segs = append(p.segs, cur.String())
	}
	// Drop empty segments produced by adjacent verbs.
	segs := p.segs[:0]
	for _, s := range p.segs {
		if s != "" {
			segs = append(segs, s)
		}
	}
	p.segs = segs
	for _, s := range p.segs {
		p.literal += len(s)
	}
	return p
}

// containsAt is where the pattern's first segment matches in text, or -1.
func (p *pattern) containsAt(text string) int {
	if len(p.segs) == 0 {
		return -1
	}
	start, off := -1, 0
	for _, s := range p.segs {
		i := strings.Index(text[off:], s)
		if i < 0 {
			return -1
		}
		if start < 0 {
			start = off + i
		}
		off += i + len(s)
	}
	return start
}

// frames reports whether a, matched at ai, wraps b's match at bi: a ends in a wildcard (its
// %v is an inner error, "Failed to make webhook authenticator request: %v") that begins
// before b. The frame names the cause whatever its inner error says.
func frames(a *pattern, ai int, b *pattern, bi int) bool {
	return a != nil && b != nil && a.trail && ai >= 0 && ai < bi && ai+a.literal <= bi
}

// wins reports whether p, matched at at, names the line better than found, matched at foundAt:
// a named cause beats a marker of the unknown entry, however long the marker (MSAL's "(POST)
// error: reply status code was 401" around the body's AADSTS7000222); a frame beats what it
// wraps, except that an event, or a frame marked yields, wrapping a cause gives way to it (the
// event "Cloud provider could not be initialized: %v" is the consequence, its inner Keystone 401
// or vCenter InvalidLogin the cause; so is the kubelet's "failed to fetch token: %v" around a
// TokenRequest denial); otherwise the more specific pattern.
func wins(p *pattern, at int, found *pattern, foundAt int) bool {
	switch {
	case found == nil:
		return true
	case (p.cause == Unknown) != (found.cause == Unknown):
		return found.cause == Unknown
	case frames(p, at, found, foundAt):
		return !p.givesWay() || found.kind != "cause"
	case frames(found, foundAt, p, at):
		return found.givesWay() && p.kind == "cause"
	}
	return better(p, found)
}

// givesWay reports whether p, as a frame, gives way to a cause it wraps.
func (p *pattern) givesWay() bool { return p.kind == "event" || p.yields }

// anchored reports whether the whole of text matches the pattern.
func (p *pattern) anchored(text string) bool {
	if len(p.segs) == 0 {
		return false
	}
	segs := p.segs
	if !p.lead {
		if !strings.HasPrefix(text, segs[0]) {
			return false
		}
		text = text[len(segs[0]):]
		segs = segs[1:]
		if len(segs) == 0 {
			return p.trail || text == ""
		}
	}
	last := segs[len(segs)-1]
	for _, s := range segs[:len(segs)-1] {
		i := strings.Index(text, s)
		if i < 0 {
			return false
		}
		text = text[i+len(s):]
	}
	if p.trail {
		return strings.Contains(text, last)
	}
	return strings.HasSuffix(text, last)
}

// truncatedMinimum is how much of a cut-off message must be there to classify it.
const truncatedMinimum = 12

// prefixOf reports how many literal bytes of the pattern a cut-off text matches: what is
// there must match, and at least truncatedMinimum literal bytes (or the whole first segment)
// must be present. 0 means no match.
func (p *pattern) prefixOf(text string) int {
	if len(p.segs) == 0 || p.lead || len(text) < truncatedMinimum && len(text) < len(p.segs[0]) {
		return 0
	}
	enough := func(n int) int {
		if n >= truncatedMinimum || n >= len(p.segs[0]) {
			return n
		}
		return 0
	}
	matched := 0
	for i, s := range p.segs {
		if i > 0 {
			// A wildcard came before s: find s, or accept that the text ends inside the wildcard.
			j := strings.Index(text, s)
			if j < 0 {
				if k := longestSuffixPrefix(text, s); k > 0 {
					return enough(matched + k)
				}
				return enough(matched)
			}
			text = text[j:]
		}
		if len(text) <= len(s) {
			if !strings.HasPrefix(s, text) {
				return 0
			}
			return enough(matched + len(text))
		}
		if !strings.HasPrefix(text, s) {
			return 0
		}
		matched += len(s)
		text = text[len(s):]
	}
	return 0 // text is longer than the pattern: not a truncation
}

// longestSuffixPrefix is the length of the longest suffix of text that is a prefix of s.
func longestSuffixPrefix(text, s string) int {
	for k := min(len(text), len(s)-1); k > 0; k-- {
		if strings.HasSuffix(text, s[:k]) {
			return k
		}
	}
	return 0
}

// authenticatorSource marks the catalogue entries whose messages are errors of the
// service-account token authenticator: they are only ever logged inside the authentication
// filter's "Unable to authenticate the request" line, so they classify only there.
const authenticatorSource = "pkg/serviceaccount/"

// authOnly reports whether msg names its cause only inside an authentication error: the
// message says so (where: auth), or it is the service-account authenticator's and says nothing.
func authOnly(e catalogue.Entry, msg catalogue.Message) bool {
	switch msg.Where {
	case catalogue.WhereAuth:
		return true
	case catalogue.WhereAny:
		return false
	}
	return e.Kind == "cause" && strings.Contains(e.Source, authenticatorSource)
}

// spellings are the texts a catalogue message is matched by: itself and, for a sentence that
// ends in a period, the sentence without it — quoted in a title, a table or another message, the
// period is the first thing to go (k3s#4221: "invalid bearer token, Token has expired"). The
// whole sentence, one byte longer, wins where both match.
func spellings(text string) []string {
	if t, ok := strings.CutSuffix(text, "."); ok && !strings.HasSuffix(t, ".") && len(t) >= 8 {
		return []string{text, t}
	}
	return []string{text}
}

// matchers holds every compiled catalogue message.
type matchers struct {
	all []pattern
}

func newMatchers(c *catalogue.Catalogue) *matchers {
	m := &matchers{}
	n := 0
	for _, e := range c.Entries {
		if e.Kind != "cause" && e.Kind != "event" {
			continue // findings are checks' results, not log lines
		}
		for _, msg := range e.Messages {
			for _, text := range spellings(msg.Text) {
				p := compilePattern(text)
				p.cause, p.kind, p.key, p.since, p.until, p.order = e.ID, e.Kind, msg.Key, msg.Since, msg.Until, n
				p.authOnly, p.yields = authOnly(e, msg), msg.Yields
				n++
				if len(p.segs) > 0 {
					m.all = append(m.all, p)
				}
			}
		}
	}
	return m
}

// better reports whether a beats b: more literal text matched, then catalogue order.
func better(a, b *pattern) bool {
	if b == nil {
		return true
	}
	if a.literal != b.literal {
		return a.literal > b.literal
	}
	return a.order < b.order
}

// matchMode selects how a text is compared with the patterns.
type matchMode int

const (
	modeAnchored matchMode = iota // the whole text is the message (a part of an aggregate)
	modeContains                  // the message is somewhere in the text
	modePrefix                    // the text is a cut-off start of the message
)

// best returns the most specific pattern that matches text in mode, among those allowed.
func (m *matchers) best(text string, mode matchMode, allow func(*pattern) bool) *pattern {
	var found *pattern
	bestPrefix, foundAt := 0, -1
	for i := range m.all {
		p := &m.all[i]
		if allow != nil && !allow(p) {
			continue
		}
		switch mode {
		case modeAnchored:
			if p.anchored(text) && better(p, found) {
				found = p
			}
		case modeContains:
			at := p.containsAt(text)
			if at < 0 {
				continue
			}
			if wins(p, at, found, foundAt) {
				found, foundAt = p, at
			}
		case modePrefix:
			if n := p.prefixOf(text); n > bestPrefix || n > 0 && n == bestPrefix && p.order < found.order {
				found, bestPrefix = p, n
			}
		}
	}
	return found
}
