// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"strings"

	"github.com/credwatch/credwatch/pkg/logs/cause"
)

// A worker remembers the answer for the klog messages it read last: on an incident's log the
// same few messages come on every line, after a header whose time differs. A message's
// answer depends on the message alone when nothing before it in the line bears on it
// (parseRecord leaves only such messages unread: lineHint.lazyBody), so a message seen
// before costs a map lookup instead of its reading (parseKlogBody, accessLog401) and its
// classification. TestBodyMemo and FuzzBodyMemo compare the events with those of the plain
// path.

// bodyAnswer is what reading and classifying a klog message gave.
type bodyAnswer struct {
	truncated bool // parseKlogBody found a quoted value cut off
	m         cause.Match
	ok        bool
}

const (
	maxBodies    = 4096 // answers a worker remembers (the map is cleared when it is full)
	maxMemoBody  = 1024 // longer messages are read every time
	bodyMemoMiss = 64   // after this many misses in a row, messages are read without the memo ...
	bodyMemoRest = 4096 // ... for this many lines (a log whose messages never repeat)
)

type bodyMemo struct {
	answers map[string]bodyAnswer
	misses  int // misses in a row
	resting int // lines left to read without the memo
}

// classifyBody reads r's message (r.lazy) and classifies r into ev, as parseRecord and
// classify would have without lineHint.lazyBody.
func (w *worker) classifyBody(r *Record, ev *Event) bool {
	body, mm := r.body, &w.bodies
	r.body, r.lazy = "", false
	if mm.resting > 0 || len(body) > maxMemoBody {
		mm.resting = max(mm.resting-1, 0)
		readKlogBody(body, r)
		return classify(w.cl, r, ev)
	}
	if a, hit := mm.answers[body]; hit {
		mm.misses = 0
		r.Truncated = a.truncated
		return toEvent(r, ev, a.m, a.ok)
	}
	readKlogBody(body, r)
	m, ok := w.cl.Classify(r.line())
	// An access-log line (Audit) is remembered nowhere: its fields borrow the line, and its
	// request ID and latency make every one different.
	if r.Audit == nil {
		if mm.answers == nil || len(mm.answers) >= maxBodies {
			mm.answers = make(map[string]bodyAnswer, 64)
		}
		mm.answers[strings.Clone(body)] = bodyAnswer{r.Truncated, m, ok}
	}
	if mm.misses++; mm.misses >= bodyMemoMiss {
		mm.misses, mm.resting = 0, bodyMemoRest
	}
	return toEvent(r, ev, m, ok)
}
