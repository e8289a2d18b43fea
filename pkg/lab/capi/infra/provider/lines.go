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

	"github.com/credwatch/credwatch/pkg/lab/capi/infra/controller"
	"github.com/credwatch/credwatch/pkg/lab/platform"
)

// The provider's events besides platform's.
const (
	EventLog  = "log"  // one of the controller's progress lines (Message)
	EventStep = "step" // one of the controller's steps (StepLine.Step)
)

// StepLine is the line of a step: the event's fields and the step.
type StepLine struct {
	platform.Event
	Step controller.Event `json:"step"`
}

// ParseStep reads a step line; ok is false for any other line.
func ParseStep(line []byte) (controller.Event, bool) {
	var s StepLine
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &s) != nil || s.Event.Event != EventStep {
		return controller.Event{}, false
	}
	return s.Step, true
}

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
	l.write(StepLine{Event: e})
}

// step writes the line of a step the controller took.
func (l *lines) step(e controller.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, msg, _ := strings.Cut(e.String(), " ") // without the clock time: the line has the time
	l.write(StepLine{Event: platform.Event{Event: EventStep, Message: msg}, Step: e})
}

// write writes s, a step's line or (no step) an event's, stamped with the time and the pod
// (l.mu held).
func (l *lines) write(s StepLine) {
	s.Event.Time, s.Event.Pod = l.now().UTC(), l.pod
	var v any = s
	if s.Event.Event != EventStep {
		v = s.Event
	}
	b, _ := json.Marshal(v)
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
			l.write(StepLine{Event: platform.Event{Event: EventLog, Message: line}})
		}
	}
}

// isClock reports whether s is a time of day as the controller writes it (15:04:05.000).
func isClock(s string) bool {
	_, err := time.Parse("15:04:05.000", s)
	return err == nil
}
