package workload

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/bearer"
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

// MemberCount counts the calls one member served.
type MemberCount struct {
	Member       string      `json:"member"` // bearer.NoResponse for calls that got no answer
	Calls        int         `json:"calls"`
	Unauthorized int         `json:"unauthorized"`
	Statuses     map[int]int `json:"statuses"` // HTTP status -> calls; 0 = no response
}

// Summary is the cumulative line written every Config.Summary and on exit.
type Summary struct {
	Type         string        `json:"type"` // TypeSummary
	Time         time.Time     `json:"time"`
	Pod          string        `json:"pod,omitempty"`
	Since        time.Time     `json:"since"` // the process start
	Calls        int           `json:"calls"`
	Accepted     int           `json:"accepted"` // 2xx
	Unauthorized int           `json:"unauthorized"`
	NoResponse   int           `json:"noResponse"`
	TokenErrors  int           `json:"tokenErrors"`
	Members      []MemberCount `json:"members"` // by member name
	LastReason   string        `json:"lastReason,omitempty"`
}

type summary struct {
	s       Summary
	members map[string]*MemberCount
}

func newSummary(pod string, start time.Time) *summary {
	return &summary{s: Summary{Type: TypeSummary, Pod: pod, Since: start.UTC()}, members: map[string]*MemberCount{}}
}

func (s *summary) add(c Call) {
	if c.TokenError != "" {
		s.s.TokenErrors++
		return
	}
	s.s.Calls++
	by := c.ServedBy
	if c.Status == 0 || by == "" {
		by = bearer.NoResponse
	}
	m, ok := s.members[by]
	if !ok {
		m = &MemberCount{Member: by, Statuses: map[int]int{}}
		s.members[by] = m
	}
	m.Calls++
	m.Statuses[c.Status]++
	switch {
	case c.Status == 0:
		s.s.NoResponse++
	case c.Status >= 200 && c.Status < 300:
		s.s.Accepted++
	case c.Status == http.StatusUnauthorized:
		s.s.Unauthorized++
		m.Unauthorized++
		s.s.LastReason = c.Reason
	}
}

// at returns a copy of the counts stamped now.
func (s *summary) at(now time.Time) Summary {
	out := s.s
	out.Time = now.UTC()
	out.Members = make([]MemberCount, 0, len(s.members))
	for _, m := range s.members {
		c := *m
		c.Statuses = maps.Clone(m.Statuses)
		out.Members = append(out.Members, c)
	}
	sort.Slice(out.Members, func(i, j int) bool { return out.Members[i].Member < out.Members[j].Member })
	return out
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
