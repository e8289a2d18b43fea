// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs/cause"
)

// memoCheck classifies lines on a worker's path (lazy klog messages, the message memo) and on
// the plain one (parseRecord reading every message, classify), and compares.
type memoCheck struct {
	w      *worker
	cl     *cause.Classifier
	ref    time.Time
	seen   int // events compared
	passes int // on the memo path: 2 for a miss then a hit
}

func newMemoCheck() *memoCheck {
	return &memoCheck{w: &worker{cl: cause.NewClassifier(catalogue.Default())}, cl: cause.NewClassifier(catalogue.Default()),
		ref: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), passes: 2}
}

func (c *memoCheck) check(t *testing.T, line string) {
	t.Helper()
	rec := parseRecord(line, lineHint{ref: c.ref, host: "h"})
	var want Event
	wantOK := classify(c.cl, &rec, &want)
	for range c.passes {
		r := parseRecord(line, lineHint{ref: c.ref, host: "h", lazyBody: true, clock: &c.w.clock})
		var got Event
		var ok bool
		lazy := r.lazy
		if !lazy && !reflect.DeepEqual(r, rec) {
			t.Fatalf("%q: memo path record %+v\nwant %+v", line, r, rec)
		}
		if r.lazy {
			ok = c.w.classifyBody(&r, &got)
		} else {
			ok = classify(c.w.cl, &r, &got)
		}
		if ok != wantOK || ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: memo path %v %+v\nwant %v %+v", line, ok, got, wantOK, want)
		}
		if lazy && (r.Time != rec.Time || r.Format != rec.Format || r.Host != rec.Host || r.Severity != rec.Severity) {
			t.Fatalf("%q: memo path record %+v\nwant %+v", line, r, rec)
		}
	}
	if wantOK {
		c.seen++
	}
}

// TestBodyMemo checks that a worker's events are the plain path's for every line of the test
// logs and lab captures, the field corpus, with the memo cold and warm, and while it rests.
func TestBodyMemo(t *testing.T) {
	t.Parallel()
	c := newMemoCheck()
	var lines []string
	for _, l := range bytes.Split(testLogs(t), []byte("\n")) {
		lines = append(lines, string(l))
	}
	for _, fam := range loadFieldCorpus(t) {
		for _, l := range fam.Lines {
			lines = append(lines, l.Line, "E1129 08:00:00.000000 1 x.go:1] "+l.Line)
		}
	}
	for _, l := range lines {
		c.check(t, l)
		for _, v := range tsVariants(l) { // the same line with other times
			c.check(t, v)
		}
	}
	if c.seen < 1000 {
		t.Errorf("only %d events compared", c.seen)
	}
	// Every message new: the memo rests, and the answers stay the same.
	c.passes = 1
	for i := range 3 * bodyMemoMiss {
		c.check(t, "E1129 08:00:00.000000 1 x.go:1] Unable to authenticate the request due to an error: invalid bearer token "+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	if c.w.bodies.resting == 0 {
		t.Error("the memo never rested on messages that never repeat")
	}
}

// tsVariants are line with other values in place of its "ts" number: numbers of other lengths,
// out of range, not numbers.
func tsVariants(line string) []string {
	i := strings.Index(line, `"ts":`)
	if i < 0 {
		return nil
	}
	j := i + 5
	for j < len(line) && line[j] != ',' && line[j] != '}' {
		j++
	}
	var out []string
	for _, ts := range []string{"1795940000.5", "1795949999.999", "1795940001", "1e9", "-1", "0", "1e12", "abc", " 1795940000.5", "", "\"x\""} {
		out = append(out, line[:i+5]+ts+line[j:])
	}
	return out
}

// FuzzBodyMemo compares the memo path with the plain path on any line, also behind a klog
// header and in a Docker envelope.
func FuzzBodyMemo(f *testing.F) {
	for _, l := range benchLines {
		f.Add(l)
	}
	f.Add(`"Unable to authenticate the request" err="[invalid bearer token, x` + "\"")
	f.Add(`"HTTP" verb="GET" URI="/api" resp=401 userAgent="a"`)
	c := newMemoCheck()
	f.Add(`{"caller":"a.go:1","err":"[invalid bearer token, x]","msg":"Unable to authenticate the request","ts":1795940042.228,"v":0}`)
	f.Fuzz(func(t *testing.T, s string) {
		c.check(t, s)
		for _, v := range tsVariants(s) {
			c.check(t, v)
		}
		c.check(t, "E1129 08:00:00.000000 1 x.go:1] "+s)
		c.check(t, `{"log":"E1129 08:00:00.000000 1 x.go:1] `+s+`\n","stream":"stderr","time":"2026-11-29T08:00:00Z"}`)
	})
}
