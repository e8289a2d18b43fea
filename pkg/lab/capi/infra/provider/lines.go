// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package provider

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/platform"
)

// EventLog is the event of one of the controller's progress lines (Message).
const EventLog = "log"

// lines writes events as JSON lines to out; as an io.Writer (the controller's Log) it turns
// each line written into an EventLog event. Safe for concurrent use.
type lines struct {
	mu      sync.Mutex
	out     io.Writer
	pod     string
	now     func() time.Time
	partial []byte // a line not yet ended
}

func newLines(out io.Writer, pod string) *lines {
	return &lines{out: out, pod: pod, now: time.Now}
}

// emit writes e, stamped with the time and the pod.
func (l *lines) emit(e platform.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.write(e)
}

// write writes e (l.mu held).
func (l *lines) write(e platform.Event) {
	e.Time, e.Pod = l.now().UTC(), l.pod
	b, _ := json.Marshal(e)
	_, _ = l.out.Write(append(b, '\n'))
}

// Write turns every whole line of p into an EventLog event, without the controller's leading
// clock time (the event has the time).
func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		if clock, rest, ok := strings.Cut(line, " "); ok && isClock(clock) {
			line = rest
		}
		if line != "" {
			l.write(platform.Event{Event: EventLog, Message: line})
		}
	}
}

// isClock reports whether s is a time of day as the controller writes it (15:04:05.000).
func isClock(s string) bool {
	_, err := time.Parse("15:04:05.000", s)
	return err == nil
}
