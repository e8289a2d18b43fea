package logs

import (
	"strings"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// pattern is one catalogue message text compiled into literal segments; the %-verbs between
// them (%q, %s, %v, %d) are wildcards.
type pattern struct {
	cause   string // catalogue entry ID
	kind    string // cause or event
	key     string // message key
	since   string
	until   string
	text    string
	segs    []string // literal segments; a wildcard sits between two consecutive segments
	lead    bool     // the text starts with a wildcard
	trail   bool     // the text ends with a wildcard
	literal int      // total literal length, the specificity of a match
	order   int      // catalogue order, the tie-breaker
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

// contains reports whether the segments occur in text in order (wildcards match anything).
func (p *pattern) contains(text string) bool {
	if len(p.segs) == 0 {
		return false
	}
	for _, s := range p.segs {
		i := strings.Index(text, s)
		if i < 0 {
			return false
		}
		text = text[i+len(s):]
	}
	return true
}

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

// prefixOf reports whether text is a cut-off start of the pattern: what is there matches, and at
// least truncatedMinimum literal bytes (or the whole first segment) are present.
func (p *pattern) prefixOf(text string) bool {
	if len(p.segs) == 0 || p.lead || len(text) < truncatedMinimum && len(text) < len(p.segs[0]) {
		return false
	}
	matched := 0
	for i, s := range p.segs {
		if i > 0 {
			// A wildcard came before s: find s, or accept that the text ends inside the wildcard.
			j := strings.Index(text, s)
			if j < 0 {
				return matched >= truncatedMinimum || i > 0 && matched >= len(p.segs[0])
			}
			text = text[j:]
		}
		if len(text) <= len(s) {
			return strings.HasPrefix(s, text) && (matched+len(text) >= truncatedMinimum || matched+len(text) >= len(p.segs[0]))
		}
		if !strings.HasPrefix(text, s) {
			return false
		}
		matched += len(s)
		text = text[len(s):]
	}
	return false // text is longer than the pattern: not a truncation
}

// matchers holds every compiled catalogue message.
type matchers struct {
	all []pattern
}

func newMatchers(c *catalogue.Catalogue) *matchers {
	m := &matchers{}
	n := 0
	for _, e := range c.Entries {
		for _, msg := range e.Messages {
			p := compilePattern(msg.Text)
			p.cause, p.kind, p.key, p.since, p.until, p.order = e.ID, e.Kind, msg.Key, msg.Since, msg.Until, n
			n++
			if len(p.segs) > 0 {
				m.all = append(m.all, p)
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
	for i := range m.all {
		p := &m.all[i]
		if allow != nil && !allow(p) {
			continue
		}
		var ok bool
		switch mode {
		case modeAnchored:
			ok = p.anchored(text)
		case modeContains:
			ok = p.contains(text)
		case modePrefix:
			ok = p.prefixOf(text)
		}
		if ok && better(p, found) {
			found = p
		}
	}
	return found
}
