// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"slices"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/finding"
)

// State is what one interval saw, reduced to what is compared between intervals.
type State struct {
	Interval int           `json:"interval"`
	Time     time.Time     `json:"time"`
	Took     time.Duration `json:"took"`
	Members  []MemberState `json:"members"`
	// Trust are the fresh probe tokens' reviews; Held the held and --token-file tokens' reviews.
	Trust    []Cell            `json:"trust"`
	Held     []Cell            `json:"held"`
	Findings []finding.Finding `json:"findings"`
	Sources  map[string]string `json:"unavailable,omitempty"`
	// LogCauses are the causes the members' own log lines name (--log-file).
	LogCauses []LogCause `json:"logCauses,omitempty"`
	// LogTotals count the lines naming each cause since watch began, quiet causes included.
	LogTotals []LogTotal `json:"logTotals,omitempty"`
	// LogBehind are the followed files this interval did not read to their end (--log-file).
	LogBehind []LogBehind `json:"logBehind,omitempty"`
	// ServiceAccountTokens count the requests the members' audit logs (--audit-log) recorded with a
	// stale or legacy token, per service account, since watch began.
	ServiceAccountTokens []SATokens `json:"serviceAccountTokens,omitempty"`

	byCheck map[string][]finding.Finding // the findings of each check, carried over when it is skipped
	known   map[string]Cell              // the last known review of every cell (Trust and Held), by key
}

// MemberState is one member in one interval.
type MemberState struct {
	check.Endpoint
	// Machine is the Cluster API Machine it runs on (watch --capi-cluster), when found.
	Machine    string   `json:"machine,omitempty"`
	Up         bool     `json:"up"`
	Ready      bool     `json:"ready"`
	NotReady   []string `json:"notReady,omitempty"`
	Error      string   `json:"error,omitempty"`
	Version    string   `json:"version,omitempty"`
	Issuer     string   `json:"issuer,omitempty"`
	KIDs       []string `json:"kids,omitempty"`
	SigningKID string   `json:"signingKid,omitempty"`
	// AuthFailures maps the result label of authentication_attempts other than
	// success ("failure", "error") to the member's counter; nil when /metrics was not read.
	AuthFailures map[string]float64 `json:"authFailures,omitempty"`
}

// Cell is one TokenReview: the token from Signer (or the file Token) reviewed by Verifier.
type Cell struct {
	Signer   string `json:"signer,omitempty"`
	Token    string `json:"token,omitempty"`
	Verifier string `json:"verifier"`
	Accepted bool   `json:"accepted"`
	Cause    string `json:"cause,omitempty"`
	Message  string `json:"message,omitempty"`

	kind string // "held" for held tokens: their keys differ from the fresh tokens'
}

// key identifies a cell across intervals.
func (c Cell) key() string {
	return c.Signer + "\x00" + c.Token + "\x00" + c.kind + "\x00" + c.Verifier
}

// unknown is a cell whose review could not be made (member unreachable, token not minted).
func (c Cell) unknown() bool { return c.Cause == "unreachable" || c.Cause == "not-minted" }

// sources returns s.Sources, made when nil.
func (s *State) sources() map[string]string {
	if s.Sources == nil {
		s.Sources = map[string]string{}
	}
	return s.Sources
}

// Member returns the member named name.
func (s *State) Member(name string) (MemberState, bool) {
	i := slices.IndexFunc(s.Members, func(m MemberState) bool { return m.Name == name })
	if i < 0 {
		return MemberState{}, false
	}
	return s.Members[i], true
}

// newState reduces a check snapshot and its report to a State. A check skipped this interval
// (say, the trust matrix could not be built through a load balancer mid-roll) keeps its findings
// of prev: not knowing is not "cleared". So does a check in carry (one that reads /metrics, in an
// interval that did not read them).
func newState(n int, at time.Time, took time.Duration, snap *check.Snapshot, r *check.Report, checks []check.Check, carry map[string]bool, prev *State) *State {
	s := &State{Interval: n, Time: at, Took: took, Sources: snap.Sources, byCheck: map[string][]finding.Finding{}}
	skipped := map[string]bool{}
	for _, sk := range r.Skipped {
		skipped[sk.Check] = true
	}
	for _, c := range checks {
		fs := r.FindingsOf(c.Name)
		if (skipped[c.Name] || carry[c.Name]) && prev != nil {
			fs = prev.byCheck[c.Name]
		}
		s.byCheck[c.Name] = fs
		s.Findings = append(s.Findings, fs...)
	}
	for _, f := range r.Findings {
		if f.ID == "check-skipped" {
			s.Findings = append(s.Findings, f)
		}
	}
	finding.Sort(s.Findings)
	for _, m := range snap.Members {
		ms := MemberState{Endpoint: m.Endpoint, Machine: m.Machine, Up: m.Reachable,
			NotReady: m.NotReady, Error: m.Error, Version: m.Version, SigningKID: m.SigningKID}
		ms.Ready = m.Reachable && len(m.NotReady) == 0
		if m.Discovery != nil {
			ms.Issuer = m.Discovery.Issuer
		}
		for _, k := range m.JWKS {
			ms.KIDs = append(ms.KIDs, k.KID)
		}
		slices.Sort(ms.KIDs)
		if m.Metrics != nil {
			ms.AuthFailures = map[string]float64{}
			for res, v := range m.Metrics.AuthAttempts {
				if res != "success" {
					ms.AuthFailures[res] = v
				}
			}
		}
		s.Members = append(s.Members, ms)
	}
	slices.SortFunc(s.Members, func(a, b MemberState) int { return strings.Compare(a.Name, b.Name) })
	if snap.Matrix != nil {
		for _, row := range snap.Matrix.Rows {
			s.Trust = append(s.Trust, cells(row, row.Via, "", "")...)
		}
	}
	for _, row := range snap.Tokens {
		if via, ok := strings.CutPrefix(row.Token, heldPrefix); ok {
			s.Held = append(s.Held, cells(row, via, "", "held")...)
		} else {
			s.Held = append(s.Held, cells(row, "", row.Token, "")...)
		}
	}
	s.remember(prev)
	return s
}

// remember carries the last known review of each cell over intervals where it was unknown (the
// member down, the matrix not built), so a cell rejected before and after is not "broken" twice.
// Cells whose verifier is no longer listed are forgotten.
func (s *State) remember(prev *State) {
	s.known = map[string]Cell{}
	if prev != nil {
		for k, c := range prev.known {
			if _, ok := s.Member(c.Verifier); ok {
				s.known[k] = c
			}
		}
	}
	for _, group := range [][]Cell{s.Trust, s.Held} {
		for _, c := range group {
			if !c.unknown() {
				s.known[c.key()] = c
			}
		}
	}
}

// cells are a row's reviews: of the token minted through or held from signer, or of the
// --token-file token.
func cells(row check.Row, signer, token, kind string) []Cell {
	out := make([]Cell, 0, len(row.Cells))
	for _, c := range row.Cells {
		out = append(out, Cell{Signer: signer, Token: token, Verifier: c.Member, Accepted: c.Accepted, Cause: c.Cause, Message: c.Message, kind: kind})
	}
	return out
}
