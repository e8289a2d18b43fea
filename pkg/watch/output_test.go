// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/redact/redacttest"
)

// TestViewQuotesHostileText: a hostile string in a member's name, URL or signing kid, or in an
// event's message, reaches neither the event lines nor the live view raw; the live view's own
// clear-screen sequence does.
func TestViewQuotesHostileText(t *testing.T) {
	t.Parallel()
	for _, h := range redacttest.HostileText {
		t.Run(h.Name, func(t *testing.T) {
			t.Parallel()
			s := &State{Interval: 1, Time: time.Unix(0, 0), Members: []MemberState{{
				Endpoint: check.Endpoint{Name: "m" + h.Raw, URL: "https://" + h.Raw}, Up: true, SigningKID: h.Raw}}}
			events := []Event{{Time: time.Unix(0, 0), Kind: MemberJoined, Member: "m" + h.Raw, Message: "issuer " + h.Raw + " changed"}}
			var plain, live bytes.Buffer
			NewLines(&plain).Observe(s, events)
			NewLive(&live, 5).Observe(s, events)
			// the message is one line: whitespace (a '\r', U+2028) is a space in it
			msg := redact.Printable(oneLine(events[0].Message))
			if want := msg; !strings.Contains(plain.String(), want) {
				t.Errorf("event line %q lacks %q", plain.String(), want)
			}
			view, ok := strings.CutPrefix(live.String(), "\x1b[H\x1b[2J")
			if !ok {
				t.Fatalf("live view %q does not start by clearing the screen", live.String())
			}
			for _, want := range []string{"m" + h.Quoted, "https://" + h.Quoted, msg} {
				if !strings.Contains(view, want) {
					t.Errorf("live view lacks %q:\n%s", want, view)
				}
			}
			for name, out := range map[string]string{"event line": plain.String(), "live view": view} {
				if i := strings.IndexFunc(out, func(r rune) bool { return r == '\x1b' || r == '\r' || r == 0 || r == '\u202e' || r == '\u200b' }); i >= 0 {
					t.Errorf("%s holds %q raw at %d: %q", name, out[i:i+1], i, out)
				}
			}
		})
	}
}

// TestIssuerChangedLookalike: an issuer-changed event between two issuers that display alike
// says where they differ.
func TestIssuerChangedLookalike(t *testing.T) {
	t.Parallel()
	const svc = "https://kubernetes.default.svc"
	for _, tt := range []struct{ from, to, want string }{
		{svc, "https://kubernetes.default.svс", "(they differ at byte 29 ('c' vs U+0441))"},
		{svc, "https://oidc.example", ""},
	} {
		d := &differ{cur: &State{}}
		d.changes(MemberState{Up: true, Issuer: tt.from}, MemberState{Up: true, Issuer: tt.to})
		if len(d.out) != 1 || d.out[0].Kind != IssuerChanged {
			t.Fatalf("events %+v, want one issuer-changed", d.out)
		}
		if msg := d.out[0].Message; tt.want == "" && strings.Contains(msg, "differ at") || !strings.Contains(msg, tt.want) {
			t.Errorf("message %q, want it to say %q", msg, tt.want)
		}
	}
}

// TestFormatEventTime: an event line starts with its time in RFC 3339, in UTC with the date and
// the zone, whatever zone the event's time is in: the line stays unambiguous next to logs.
func TestFormatEventTime(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 9, 31, 19, 500e6, time.UTC)
	for _, tt := range []struct {
		name string
		time time.Time
		want string
	}{
		{"UTC", at, "2026-11-30T09:31:19Z  "},
		{"east of UTC, next day", at.Add(16 * time.Hour).In(time.FixedZone("JST", 9*3600)), "2026-12-01T01:31:19Z  "},
		{"west of UTC", at.In(time.FixedZone("PST", -8*3600)), "2026-11-30T09:31:19Z  "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			line := FormatEvent(Event{Time: tt.time, Severity: "error", Kind: TrustBroken, Member: "apiserver-2", ID: "signing-key-unknown", Message: "m"})
			if !strings.HasPrefix(line, tt.want) {
				t.Errorf("line %q, want it to start with %q", line, tt.want)
			}
		})
	}
}
