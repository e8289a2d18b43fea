// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package workload

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/bearer"
	"github.com/credwatch/credwatch/pkg/lab/tally"
)

// The values of a line's "type".
const (
	TypeCall    = "call"
	TypeSummary = "summary"
)

// Call is the line written for one API call.
type Call struct {
	Type string    `json:"type"` // TypeCall
	Time time.Time `json:"time"` // when the answer came back
	Pod  string    `json:"pod,omitempty"`
	bearer.Presented
	Token      TokenClaims `json:"token,omitzero"`
	TokenError string      `json:"tokenError,omitempty"` // the token file could not be read: no call made
}

// TokenClaims are the times and key of the token a call presented, read without verifying it (the
// signature is never decoded or written).
type TokenClaims struct {
	KeyID    string    `json:"kid,omitempty"`
	IssuedAt time.Time `json:"iat,omitzero"`
	Expires  time.Time `json:"exp,omitzero"`
}

// claimsOf decodes the kid, iat and exp of a JWT; anything it cannot decode stays zero.
func claimsOf(tok string) TokenClaims {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return TokenClaims{}
	}
	var hdr struct {
		KeyID string `json:"kid"`
	}
	var body struct {
		IssuedAt *json.Number `json:"iat"`
		Expires  *json.Number `json:"exp"`
	}
	var c TokenClaims
	if b, err := base64.RawURLEncoding.DecodeString(parts[0]); err == nil && json.Unmarshal(b, &hdr) == nil {
		c.KeyID = hdr.KeyID
	}
	if b, err := base64.RawURLEncoding.DecodeString(parts[1]); err == nil && json.Unmarshal(b, &body) == nil {
		c.IssuedAt, c.Expires = unixTime(body.IssuedAt), unixTime(body.Expires)
	}
	return c
}

func unixTime(n *json.Number) time.Time {
	if n == nil {
		return time.Time{}
	}
	s, err := n.Int64()
	if err != nil {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}

// Summary is the cumulative line written every Config.Summary and on exit: the pod's calls so
// far, counted by tally.Tally as every tenant's are (Since is the process start).
type Summary struct {
	Type string    `json:"type"` // TypeSummary
	Time time.Time `json:"time"`
	Pod  string    `json:"pod,omitempty"`
	tally.Snapshot
}

// summary counts a pod's calls (Run's, one goroutine).
type summary struct {
	pod   string
	tally tally.Tally
}

func newSummary(pod string, start time.Time) *summary {
	s := &summary{pod: pod}
	s.tally.Reset(start.UTC())
	s.tally.SetPods(1)
	return s
}

func (s *summary) add(c Call) { c.AddTo(&s.tally) }

// AddTo counts c in t: a call that could not read its token as a failed TokenRequest, any other
// by the member that answered it (none: tally.NoResponse), with its token's age and its reason.
func (c Call) AddTo(t *tally.Tally) {
	if c.TokenError != "" { // no call was made
		t.Minted("", errors.New(c.TokenError))
		return
	}
	by := c.ServedBy
	if c.Status == 0 {
		by = "" // no answer: tally.NoResponse
	}
	var age time.Duration
	if !c.Token.IssuedAt.IsZero() {
		age = c.Time.Sub(c.Token.IssuedAt)
	}
	t.Request(c.Time, c.Pod, by, "", c.Status, age, c.Reason)
}

// at returns a copy of the counts stamped now.
func (s *summary) at(now time.Time) Summary {
	return Summary{Type: TypeSummary, Time: now.UTC(), Pod: s.pod, Snapshot: s.tally.Snapshot()}
}

// Line is one parsed output line: exactly one of Call and Summary is set.
type Line struct {
	Call    *Call
	Summary *Summary
}

// ParseLine decodes one line of the workload's output (a pod log line without the kubelet's
// prefix).
func ParseLine(b []byte) (Line, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return Line{}, fmt.Errorf("workload line: %w", err)
	}
	switch head.Type {
	case TypeCall:
		var c Call
		if err := json.Unmarshal(b, &c); err != nil {
			return Line{}, fmt.Errorf("workload call line: %w", err)
		}
		return Line{Call: &c}, nil
	case TypeSummary:
		var s Summary
		if err := json.Unmarshal(b, &s); err != nil {
			return Line{}, fmt.Errorf("workload summary line: %w", err)
		}
		return Line{Summary: &s}, nil
	}
	return Line{}, fmt.Errorf("workload line: unknown type %q", head.Type)
}
