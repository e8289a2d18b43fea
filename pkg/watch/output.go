// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/credwatch/credwatch/pkg/redact"
)

// JSONLines writes every event as one JSON object per line (docs/json.md, WatchEvent).
type JSONLines struct {
	mu  sync.Mutex
	enc *json.Encoder
	err error
}

// NewJSONLines writes to w.
func NewJSONLines(w io.Writer) *JSONLines {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &JSONLines{enc: enc}
}

// Observe writes the events.
func (j *JSONLines) Observe(_ *State, events []Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, e := range events {
		if err := j.enc.Encode(e); err != nil && j.err == nil {
			j.err = fmt.Errorf("write event: %w", err)
		}
	}
}

// Err is the first write error.
func (j *JSONLines) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// Lines writes every event as one plain line: for pipes and files, and a terminal. The line is
// text, Printable like every terminal path: a member name, an issuer or a log line from the
// cluster cannot send an escape sequence or a bidi override through it.
type Lines struct {
	mu sync.Mutex
	w  io.Writer
}

// NewLines writes to w.
func NewLines(w io.Writer) *Lines { return &Lines{w: w} }

// Observe writes the events.
func (l *Lines) Observe(_ *State, events []Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range events {
		fmt.Fprintln(l.w, redact.Printable(FormatEvent(e)))
	}
}

// FormatEvent renders an event on one line: time (RFC 3339 in UTC, with the date and the zone, as
// the JSON Lines have it: a line read the next day, or next to logs of another zone, stays
// unambiguous), severity, kind, member, catalogue ID, message.
func FormatEvent(e Event) string {
	id := e.ID
	if id == "" {
		id = "-"
	}
	member := e.Member
	if member == "" {
		member = "-"
	}
	return fmt.Sprintf("%s  %-8s %-20s %-14s %-22s %s", e.Time.UTC().Format(time.RFC3339), e.Severity, e.Kind, member, id, oneLine(e.Message))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Live redraws the whole view every interval: for a terminal. The view is Printable; only the
// redraw's own clear-screen sequence reaches the terminal raw (redact.Control).
type Live struct {
	mu     sync.Mutex
	w      io.Writer
	recent []Event
	keep   int
}

// NewLive draws on w, keeping the last n events on screen.
func NewLive(w io.Writer, n int) *Live { return &Live{w: w, keep: n} }

// Observe redraws.
func (l *Live) Observe(s *State, events []Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recent = append(l.recent, events...)
	if len(l.recent) > l.keep {
		l.recent = append([]Event(nil), l.recent[len(l.recent)-l.keep:]...)
	}
	var b strings.Builder
	WriteView(&b, s, l.recent)
	_ = redact.Control(l.w, "\x1b[H\x1b[2J")
	_, _ = io.WriteString(l.w, redact.Printable(b.String()))
}

// WriteView renders a state as tables: members, the trust matrix, held tokens, recent events.
func WriteView(w io.Writer, s *State, recent []Event) {
	fmt.Fprintf(w, "credwatch watch · interval %d · %s · took %s\n\n", s.Interval, s.Time.Format("15:04:05"), s.Took.Round(1e6))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tURL\tUP\tREADY\tVERSION\tSIGNING KID")
	for _, m := range s.Members {
		ready := yesNo(m.Ready)
		if len(m.NotReady) > 0 {
			ready = "no: " + strings.Join(m.NotReady, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, m.URL, yesNo(m.Up), ready, dash(m.Version), dash(short(m.SigningKID)))
	}
	_ = tw.Flush()
	names := make([]string, len(s.Members))
	for i, m := range s.Members {
		names[i] = m.Name
	}
	writeMatrix(w, "TRUST (token minted through ↓, reviewed by →)", s.Trust, names)
	writeMatrix(w, "HELD TOKENS (held since the member appeared ↓, reviewed by →)", s.Held, names)
	fmt.Fprintln(w, "\nRECENT EVENTS")
	if len(recent) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, e := range recent {
		fmt.Fprintln(w, "  "+FormatEvent(e))
	}
}

func writeMatrix(w io.Writer, title string, cells []Cell, members []string) {
	if len(cells) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprint(tw, "\t"+strings.Join(members, "\t")+"\n")
	var rows []string
	byRow := map[string]map[string]Cell{}
	for _, c := range cells {
		r := c.Signer
		if c.Token != "" {
			r = c.Token
		}
		if byRow[r] == nil {
			byRow[r] = map[string]Cell{}
			rows = append(rows, r)
		}
		byRow[r][c.Verifier] = c
	}
	for _, r := range rows {
		line := []string{r}
		for _, m := range members {
			c, ok := byRow[r][m]
			switch {
			case !ok:
				line = append(line, "-")
			case c.Accepted:
				line = append(line, "ok")
			default:
				line = append(line, c.Cause)
			}
		}
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	_ = tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func short(kid string) string {
	if len(kid) > 12 {
		return kid[:12]
	}
	return kid
}
