// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/redact"
)

// Diff turns two consecutive states into events; prev is nil for the first interval, which then
// reports every member as joined and every problem as new.
func Diff(prev, cur *State) []Event {
	if prev == nil {
		prev = &State{}
	}
	d := differ{cur: cur}
	d.members(prev)
	d.trust(prev.known, cur.Trust, false)
	d.trust(prev.known, cur.Held, true)
	d.findings(prev)
	d.logCauses(prev)
	d.logBehind(prev)
	return d.out
}

type differ struct {
	cur *State
	out []Event
}

func (d *differ) add(e Event) {
	e.Time, e.Interval = d.cur.Time, d.cur.Interval
	if e.Severity == "" {
		e.Severity = catalogue.Info
	}
	d.out = append(d.out, e)
}

func (d *differ) members(prev *State) {
	for _, m := range d.cur.Members {
		p, had := prev.Member(m.Name)
		if !had {
			msg := fmt.Sprintf("member %s (%s) joined, found by %s", m.Name, m.URL, strings.Join(m.FoundBy, ","))
			if m.Machine != "" {
				msg += ", on Machine " + m.Machine
			}
			d.add(Event{Kind: MemberJoined, Member: m.Name, Message: msg})
			p = MemberState{Up: true, Ready: true, Version: m.Version, Issuer: m.Issuer, KIDs: m.KIDs, AuthFailures: m.AuthFailures}
		}
		switch {
		case p.Up && !m.Up:
			d.add(Event{Kind: MemberDown, Member: m.Name, Severity: catalogue.Error, ID: "member-unreachable",
				Message: fmt.Sprintf("member %s does not answer: %s", m.Name, m.Error), Evidence: []finding.Evidence{{Member: m.Name, Key: "error", Value: m.Error}}})
		case !p.Up && m.Up:
			d.add(Event{Kind: MemberUp, Member: m.Name, Message: fmt.Sprintf("member %s answers again", m.Name)})
		}
		if !m.Up {
			continue
		}
		switch {
		case p.Ready && !m.Ready:
			d.add(Event{Kind: MemberUnready, Member: m.Name, Severity: catalogue.Warning, ID: "member-not-ready",
				Message:  fmt.Sprintf("member %s is not ready: /readyz fails %s", m.Name, strings.Join(m.NotReady, ", ")),
				Evidence: []finding.Evidence{{Member: m.Name, Key: "failing readiness checks", Value: strings.Join(m.NotReady, ",")}}})
		case !p.Ready && m.Ready:
			d.add(Event{Kind: MemberReady, Member: m.Name, Message: fmt.Sprintf("member %s is ready", m.Name)})
		}
		d.changes(p, m)
	}
	for _, p := range prev.Members {
		if _, ok := d.cur.Member(p.Name); !ok {
			d.add(Event{Kind: MemberLeft, Member: p.Name, Message: fmt.Sprintf("member %s (%s) is no longer listed", p.Name, p.URL)})
		}
	}
}

// lookalike is " (they differ at byte N (U+0430 vs 'a'))" when a and b display alike, else "".
func lookalike(a, b string) string {
	if d := redact.Lookalike(a, b); d != "" {
		return " (they " + d + ")"
	}
	return ""
}

// changes reports what changed on a member that answers in both intervals.
func (d *differ) changes(p, m MemberState) {
	if p.Up && m.KIDs != nil && p.KIDs != nil && !slices.Equal(p.KIDs, m.KIDs) {
		added, removed := setDiff(m.KIDs, p.KIDs), setDiff(p.KIDs, m.KIDs)
		d.add(Event{Kind: KeysChanged, Member: m.Name, Severity: catalogue.Warning,
			Message: fmt.Sprintf("member %s's JWKS changed: added %s, removed %s", m.Name, orNone(added), orNone(removed)),
			Evidence: []finding.Evidence{{Member: m.Name, Key: "kids added", Value: strings.Join(added, ",")},
				{Member: m.Name, Key: "kids removed", Value: strings.Join(removed, ",")}}})
	}
	if p.Up && p.Issuer != "" && m.Issuer != "" && p.Issuer != m.Issuer {
		d.add(Event{Kind: IssuerChanged, Member: m.Name, Severity: catalogue.Warning,
			Message: fmt.Sprintf("member %s's issuer changed from %s to %s%s", m.Name, p.Issuer, m.Issuer, lookalike(p.Issuer, m.Issuer))})
	}
	if p.Up && p.Version != "" && m.Version != "" && p.Version != m.Version {
		d.add(Event{Kind: VersionChanged, Member: m.Name, Message: fmt.Sprintf("member %s now runs %s (was %s)", m.Name, m.Version, p.Version)})
	}
	if p.AuthFailures == nil || m.AuthFailures == nil {
		return
	}
	for _, res := range sortedKeys(m.AuthFailures) {
		if delta := m.AuthFailures[res] - p.AuthFailures[res]; delta > 0 {
			d.add(Event{Kind: AuthFailures, Member: m.Name, Severity: catalogue.Warning,
				Message:  fmt.Sprintf("member %s: %.0f more authentication attempts with result %q", m.Name, delta, res),
				Evidence: []finding.Evidence{{Member: m.Name, Key: "authentication_attempts{result=" + res + "} delta", Value: fmt.Sprintf("%.0f", delta)}}})
		}
	}
}

// trust reports cells that turned rejected or accepted since their last known review. Cells
// that could not be reviewed (member down, token not minted) are left to the member events.
func (d *differ) trust(before map[string]Cell, cur []Cell, held bool) {
	broken, restored := TrustBroken, TrustRestored
	if held {
		broken, restored = HeldBroken, HeldRestored
	}
	for _, c := range cur {
		if c.unknown() {
			continue
		}
		p, had := before[c.key()]
		what := "the token minted through " + c.Signer
		if held {
			what = "the token held since " + c.Signer + " first appeared"
		}
		if c.Token != "" {
			what = "the token in " + c.Token
		}
		switch {
		case !c.Accepted && (!had || p.Accepted):
			d.add(Event{Kind: broken, Member: c.Verifier, Severity: catalogue.Error, ID: c.Cause, Signer: c.Signer, Verifier: c.Verifier, Token: c.Token,
				Message:  fmt.Sprintf("%s rejects %s: %s", c.Verifier, what, c.Cause),
				Evidence: []finding.Evidence{{Member: c.Verifier, Object: what, Key: c.Cause, Value: c.Message}}})
		case c.Accepted && had && !p.Accepted:
			d.add(Event{Kind: restored, Member: c.Verifier, Signer: c.Signer, Verifier: c.Verifier, Token: c.Token,
				Message: fmt.Sprintf("%s accepts %s again", c.Verifier, what)})
		}
	}
}

func findingKey(f finding.Finding) string { return f.ID + "\x00" + f.Member + "\x00" + f.Object }

func (d *differ) findings(prev *State) {
	before := map[string]bool{}
	for _, f := range prev.Findings {
		before[findingKey(f)] = true
	}
	now := map[string]bool{}
	for _, f := range d.cur.Findings {
		now[findingKey(f)] = true
		if !before[findingKey(f)] {
			d.add(Event{Kind: FindingRaised, Member: f.Member, Severity: f.Severity, ID: f.ID, Message: f.Message, Evidence: f.Evidence})
		}
	}
	for _, f := range prev.Findings {
		if !now[findingKey(f)] {
			d.add(Event{Kind: FindingCleared, Member: f.Member, ID: f.ID, Message: fmt.Sprintf("cleared: %s", f.Title)})
		}
	}
}

func setDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func orNone(v []string) string {
	if len(v) == 0 {
		return "none"
	}
	return strings.Join(v, ",")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// logCauses reports the causes the members' log lines started and stopped naming.
func (d *differ) logCauses(prev *State) {
	key := func(c LogCause) string { return c.Member + "\x00" + c.ID }
	before := map[string]bool{}
	for _, c := range prev.LogCauses {
		before[key(c)] = true
	}
	now := map[string]bool{}
	for _, c := range d.cur.LogCauses {
		now[key(c)] = true
		if before[key(c)] {
			continue
		}
		sev := catalogue.Warning
		if e, ok := catalogue.Default().Get(c.ID); ok {
			sev = e.Severity
		}
		d.add(Event{Kind: LogCauseAppeared, Member: c.Member, Severity: sev, ID: c.ID,
			Message:  fmt.Sprintf("%s's log names %s (%d lines)", c.Member, c.ID, c.Lines),
			Evidence: []finding.Evidence{{Member: c.Member, Object: c.Source, Key: c.ID, Value: c.Line}}})
	}
	for _, c := range prev.LogCauses {
		if !now[key(c)] {
			d.add(Event{Kind: LogCauseCleared, Member: c.Member, ID: c.ID,
				Message: fmt.Sprintf("%s's log has not named %s since %s", c.Member, c.ID, c.Last.Format(time.RFC3339))})
		}
	}
}

// logBehind reports the followed files that fell behind (a warning: watch sees their lines late)
// and those that caught up.
func (d *differ) logBehind(prev *State) {
	key := func(b LogBehind) string { return b.Member + "\x00" + b.Path }
	before, now := map[string]bool{}, map[string]bool{}
	for _, b := range prev.LogBehind {
		before[key(b)] = true
	}
	for _, b := range d.cur.LogBehind {
		now[key(b)] = true
		if !before[key(b)] {
			d.add(Event{Kind: LogFileBehind, Member: b.Member, Severity: catalogue.Warning,
				Message: fmt.Sprintf("%s's log %s grows faster than watch reads it (%d MiB an interval): %.1f MiB unread, its causes come late",
					b.Member, b.Path, tailReadMax>>20, float64(b.Bytes)/(1<<20)),
				Evidence: []finding.Evidence{{Member: b.Member, Object: b.Path, Key: "bytes unread", Value: fmt.Sprint(b.Bytes)}}})
		}
	}
	for _, b := range prev.LogBehind {
		if !now[key(b)] {
			d.add(Event{Kind: LogFileCaughtUp, Member: b.Member,
				Message: fmt.Sprintf("%s's log %s is read to its end again", b.Member, b.Path)})
		}
	}
}
