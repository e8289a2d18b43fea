package logs

import (
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// IDs this package names in code. They are catalogue entries (TestCatalogueIDs checks them).
const (
	CauseUnknown          = "unknown"
	CauseClient           = "client-unauthorized"
	authMessage           = "Unable to authenticate the request"
	authUnstructuredInfix = "due to an error: "
	loopbackText          = "invalid bearer token"
)

// Part is one element of an aggregate authentication error.
type Part struct {
	Text     string `json:"text"`
	Cause    string `json:"cause,omitempty"`
	Spelling string `json:"spelling,omitempty"` // catalogue message key that matched
	Loopback bool   `json:"loopback,omitempty"` // the loopback authenticator's "invalid bearer token"
}

// Event is one classified line: an authentication failure (Kind "cause") or a context event
// (Kind "event").
type Event struct {
	Cause      string     `json:"cause"`
	Kind       string     `json:"kind"`
	Host       string     `json:"host"`
	Component  string     `json:"component"`
	Time       time.Time  `json:"time,omitzero"`
	Line       string     `json:"line"`
	Input      string     `json:"input,omitempty"`
	LineNumber int64      `json:"lineNumber,omitempty"`
	Format     string     `json:"format,omitempty"`
	Spelling   string     `json:"spelling,omitempty"`
	Text       string     `json:"text,omitempty"`
	Parts      []Part     `json:"parts,omitempty"`
	Truncated  bool       `json:"truncated,omitempty"`
	Audit      *AuditInfo `json:"audit,omitempty"`

	in  *inputState // with seq: LineNumber is relative to block seq of in until fixLineNumbers
	seq int
}

// Classifier names the cause of log lines from the catalogue's message spellings.
type Classifier struct {
	m       *matchers
	kinds   map[string]string
	byFirst [256][]*pattern // patterns by the first byte of their text, for anchored matching
	leading []*pattern      // patterns whose text starts with a wildcard
	cache   map[string]classified
}

type classified struct {
	parts   []Part
	primary int
}

const cacheLimit = 4096

// NewClassifier compiles every message of c. A Classifier is not safe for concurrent use; make
// one per goroutine (they are cheap).
func NewClassifier(c *catalogue.Catalogue) *Classifier {
	cl := &Classifier{m: newMatchers(c), kinds: map[string]string{}, cache: map[string]classified{}}
	for _, e := range c.Entries {
		cl.kinds[e.ID] = e.Kind
	}
	for i := range cl.m.all {
		p := &cl.m.all[i]
		if p.lead {
			cl.leading = append(cl.leading, p)
		} else {
			cl.byFirst[p.segs[0][0]] = append(cl.byFirst[p.segs[0][0]], p)
		}
	}
	return cl
}

// standalone reports whether p may classify a line outside an authentication error: every
// message except the service-account authenticator's own errors (the bare loopback text, raw
// lookup errors such as "context deadline exceeded", claim errors).
func standalone(p *pattern) bool { return !p.authOnly }

func causesOnly(p *pattern) bool { return p.kind == "cause" }

// anchoredBest is m.best in anchored mode, using the first-byte index.
func (c *Classifier) anchoredBest(text string) *pattern {
	var found *pattern
	if text == "" {
		return nil
	}
	for _, p := range c.byFirst[text[0]] {
		if p.kind == "cause" && p.anchored(text) && better(p, found) {
			found = p
		}
	}
	for _, p := range c.leading {
		if p.kind == "cause" && p.anchored(text) && better(p, found) {
			found = p
		}
	}
	return found
}

// Classify turns a parsed record into an event; ok is false for lines that are neither an
// authentication failure nor a context event.
func (c *Classifier) Classify(r Record) (Event, bool) {
	ev := Event{Host: r.Host, Component: r.Component, Time: r.Time, Format: r.Format, Truncated: r.Truncated}
	if r.Audit != nil {
		if r.Audit.Code != 401 {
			return ev, false
		}
		ev.Cause, ev.Kind, ev.Audit, ev.Text = CauseClient, "cause", r.Audit, "401 "+r.Msg
		if ev.Component == "" {
			ev.Component = "apiserver"
		}
		return ev, true
	}
	if errText, ok := authError(r); ok {
		cl := c.classifyAggregate(errText, r.Truncated)
		ev.Parts = cl.parts
		ev.Kind = "cause"
		ev.Text = errText
		if cl.primary >= 0 {
			ev.Cause, ev.Spelling = cl.parts[cl.primary].Cause, cl.parts[cl.primary].Spelling
		}
		if ev.Cause == "" {
			ev.Cause = CauseUnknown
		}
		if ev.Component == "" {
			ev.Component = "apiserver"
		}
		return ev, true
	}
	text := r.Msg
	if r.Err != "" {
		text += ": " + r.Err
	}
	p := c.m.best(text, modeContains, standalone)
	if p == nil {
		return ev, false
	}
	ev.Cause, ev.Kind, ev.Spelling, ev.Text = p.cause, p.kind, p.key, text
	if ev.Component == "" && p.kind == "cause" {
		ev.Component = "client"
	}
	return ev, true
}

// authError finds the error of an "Unable to authenticate the request" line in any era's form.
func authError(r Record) (string, bool) {
	msg := r.Msg
	i := strings.Index(msg, authMessage)
	if i < 0 {
		return "", false
	}
	if r.Err != "" {
		return r.Err, true
	}
	rest := msg[i+len(authMessage):]
	if j := strings.Index(rest, authUnstructuredInfix); j >= 0 {
		return rest[j+len(authUnstructuredInfix):], true
	}
	if j := strings.Index(rest, `err="`); j >= 0 {
		v, _, _ := unquotePrefix(rest[j+4:])
		return v, true
	}
	if j := strings.Index(rest, `"err":"`); j >= 0 {
		v, _ := jsonStringField(rest[j:], "err")
		return v, true
	}
	// The message with no error after it: a klog or JSON line cut short is still an
	// authentication failure; in other text it is only a mention (a quoted copy, a document).
	return "", r.Format != "plain"
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
	for k := range parts {
		if !parts[k].Loopback && parts[k].Cause != "" {
			cl.primary = k
			break
		}
	}
	if cl.primary < 0 {
		for k := range parts {
			if !parts[k].Loopback {
				parts[k].Cause = CauseUnknown
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
