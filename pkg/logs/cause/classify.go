// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cause

import (
	"strings"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// IDs this package names in code. They are catalogue entries (TestCatalogueIDs checks them).
const (
	Unknown               = "unknown"
	Client                = "client-unauthorized"
	authMessage           = "Unable to authenticate the request"
	authUnstructuredInfix = "due to an error: "
	loopbackText          = "invalid bearer token"
)

// Line is what the classifier reads of one log line.
type Line struct {
	Msg       string // the message (klog msg, JSON msg, or the whole text)
	Err       string // the structured err value, if any
	Plain     bool   // the line is in no log format: a mention of a message is not a log of it
	Truncated bool   // the line ended inside a quoted value or JSON document
	Logger    string // the structured logger name, if any ("logger" of zap/logr JSON lines)
	Audit     bool   // the line is an audit event
	Code      int    // the audit event's response code
	Severity  string // klog's I/W/E/F or the JSON level, if any
}

// own is l with its own copy of its strings.
func (l Line) own() Line {
	l.Msg, l.Err, l.Logger, l.Severity = strings.Clone(l.Msg), strings.Clone(l.Err), strings.Clone(l.Logger), strings.Clone(l.Severity)
	return l
}

// Part is one element of an aggregate authentication error.
type Part struct {
	Text     string `json:"text"`
	Cause    string `json:"cause,omitempty"`
	Spelling string `json:"spelling,omitempty"` // catalogue message key that matched
	Loopback bool   `json:"loopback,omitempty"` // the loopback authenticator's "invalid bearer token"
}

// Match is a classified line.
type Match struct {
	Cause     string // catalogue entry ID
	Kind      string // "cause" (an authentication failure) or "event" (context)
	Spelling  string // catalogue message key that matched
	Text      string // the text that was classified
	Parts     []Part // the parts of an aggregate authentication error
	Component string // who logs such a line, for lines that do not say: apiserver, client or ""
}

// Message is one catalogue message text that may classify a line on its own.
type Message struct {
	Cause    string   // catalogue entry ID
	Key      string   // message key
	Text     string   // the catalogue text
	Literals []string // its literal segments, in order; %-verbs sit between them
}

// Standalone lists the messages of c that classify a line wherever they occur (every message
// except the service-account authenticator's own errors, which only occur inside an
// "Unable to authenticate the request" line). A reader may skip lines that hold none of them
// and none of Markers.
func Standalone(c *catalogue.Catalogue) []Message {
	m := newMatchers(c)
	var out []Message
	for i := range m.all {
		if p := &m.all[i]; standalone(p) {
			out = append(out, Message{Cause: p.cause, Key: p.key, Text: p.text, Literals: p.segs})
		}
	}
	return out
}

// Literals are the literal segments of each of msgs, for a scan that looks for them
// (scan.Anchors).
func Literals(msgs []Message) [][]string {
	out := make([][]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Literals
	}
	return out
}

// Markers are the texts besides the Standalone messages that make a line worth classifying:
// the authentication error, audit 401s (`"code":401`), relayed aggregates and their bracketless
// fragments (the loopback part they all hold), httplog's access log
// (`" resp=401`, 1.19+) and the access log of older releases, whose only constant text is the
// end of its duration before the status (wrap.go's and handlers.go's `GET /x: (4.3ms) 401
// [agent ip]`; Go durations always end in "s").
var Markers = []string{"Unable to authenticate", `"code":401`, loopbackText, `" resp=401`, "s) 401"}

// Classifier names the cause of log lines from the catalogue's message spellings.
type Classifier struct {
	m       *matchers
	byFirst [256][]*pattern // patterns by the first byte of their text, for anchored matching
	leading []*pattern      // patterns whose text starts with a wildcard
	cache   map[string]classified
	memo    map[Line]memoized       // Classify's answers for recent lines (their text without a header repeats)
	recent  [recentLines]recentLine // memo's answers last given, by Line.slot: no hashing of whole lines
}

type memoized struct {
	m  Match
	ok bool
	l  Line // the key, in strings of its own
}

// recentLine is a slot of Classifier.recent.
type recentLine struct {
	l  Line
	v  memoized
	ok bool
}

// slot picks l's slot of Classifier.recent from its lengths and a few bytes.
func (l *Line) slot() int {
	h := uint(len(l.Msg))*131 + uint(len(l.Err))*31 + uint(len(l.Logger))
	if n := len(l.Err); n > 0 {
		h += uint(l.Err[n/2])*7 + uint(l.Err[n-1])
	}
	if n := len(l.Msg); n > 0 {
		h += uint(l.Msg[n/2]) * 3
	}
	return int(h % recentLines)
}

// recentLines is the size of Classifier.recent.
const recentLines = 64

// memoMaxText bounds the text of a line whose answer is memoized, so the memo holds at most
// cacheLimit*memoMaxText bytes.
const memoMaxText = 1 << 10

type classified struct {
	parts   []Part
	primary int
}

const cacheLimit = 4096

// NewClassifier compiles every message of c. A Classifier is not safe for concurrent use; make
// one per goroutine (they are cheap).
func NewClassifier(c *catalogue.Catalogue) *Classifier {
	cl := &Classifier{m: newMatchers(c), cache: map[string]classified{}, memo: map[Line]memoized{}}
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

// Classify names the cause of l; ok is false for lines that are neither an authentication
// failure nor a context event. The returned Parts are shared: do not modify them. Neither the
// answer nor the classifier keeps a reference to l's strings, so a caller may pass strings
// that borrow a buffer it reuses.
func (c *Classifier) Classify(l Line) (Match, bool) {
	if len(l.Msg)+len(l.Err)+len(l.Logger) > memoMaxText {
		return c.classify(l.own())
	}
	slot := &c.recent[l.slot()]
	if slot.ok && slot.l == l {
		return slot.v.m, slot.v.ok
	}
	if v, ok := c.memo[l]; ok {
		slot.l, slot.v, slot.ok = v.l, v, true
		return v.m, v.ok
	}
	l = l.own()
	m, ok := c.classify(l)
	slot.l, slot.v, slot.ok = l, memoized{m, ok, l}, true
	if len(c.memo) >= cacheLimit {
		clear(c.memo)
	}
	c.memo[l] = memoized{m, ok, l}
	return m, ok
}

func (c *Classifier) classify(l Line) (Match, bool) {
	if l.Audit {
		if l.Code != 401 {
			return Match{}, false
		}
		return Match{Cause: Client, Kind: "cause", Text: "401 " + l.Msg, Component: "apiserver"}, true
	}
	text := l.Msg
	if l.Err != "" {
		text += ": " + l.Err
	}
	m, ok := c.match(l, text)
	if ok && m.Kind == "cause" && quotesOnly(l, text) {
		return Match{}, false
	}
	return m, ok
}

// match names the cause or event of l, whose text is text, before quotesOnly has its say.
func (c *Classifier) match(l Line, text string) (Match, bool) {
	errText, ok := authError(l)
	cut := l.Truncated
	if !ok {
		// A TokenReview consumer relaying the API server's answer, or the answer pasted alone.
		var relayCut bool
		errText, relayCut, ok = relayedError(text)
		cut = cut || relayCut
	}
	if ok {
		m := c.aggregateMatch(errText, cut)
		m.Component = firstOf(componentOf(l.Logger, text), "apiserver")
		return m, true
	}
	p := c.m.best(text, modeContains, standalone)
	if p == nil {
		if !onPath(text) {
			return Match{}, false
		}
		return Match{Cause: Unknown, Kind: "cause", Text: text, Component: firstOf(componentOf(l.Logger, text), "client")}, true
	}
	m := Match{Cause: p.cause, Kind: p.kind, Spelling: p.key, Text: text}
	if p.kind == "cause" {
		m.Component = firstOf(componentOf(l.Logger, text), cloudOf(p.key), "client")
	}
	return m, true
}

// aggregateMatch names the cause of an aggregate authentication error.
func (c *Classifier) aggregateMatch(errText string, cut bool) Match {
	cl := c.classifyAggregate(errText, cut)
	m := Match{Kind: "cause", Text: errText, Parts: cl.parts}
	if cl.primary >= 0 {
		m.Cause, m.Spelling = cl.parts[cl.primary].Cause, cl.parts[cl.primary].Spelling
	}
	if m.Cause == "" {
		m.Cause = Unknown
	}
	return m
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
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
