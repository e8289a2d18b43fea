// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"context"
	"strings"

	"github.com/credwatch/credwatch/pkg/check"
)

// fakeMember describes one member of a hand-built snapshot.
type fakeMember struct {
	name, kid string
	accepts   []string // kids it verifies (default: its own)
	down      bool
	notReady  []string
	authFail  float64
}

// fakeSnapshot builds what check.Fetch would return for members: each signs with kid and
// accepts the kids in accepts; held tokens (cfg.Tokens named held:X) carry X's kid.
func fakeSnapshot(cfg check.MembersConfig, ms []fakeMember) *check.Snapshot {
	s := &check.Snapshot{Now: cfg.Now(), Sources: map[string]string{}}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.name
		cm := check.Member{Endpoint: check.Endpoint{Name: m.name, URL: "https://" + m.name + ":6443", FoundBy: []string{"flag"}}, Reachable: !m.down, NotReady: m.notReady}
		if !m.down {
			cm.Version = "v1.36.3"
			cm.SigningKID, cm.SigningIss = m.kid, "https://issuer"
			cm.Discovery = &check.Discovery{Issuer: "https://issuer"}
			for _, k := range accepts(m) {
				cm.JWKS = append(cm.JWKS, check.JWK{KID: k})
			}
			if !cfg.SkipMetrics {
				cm.Metrics = &check.Metrics{AuthAttempts: map[string]float64{"success": 10, "failure": m.authFail}}
			}
			if s.Minted == nil {
				s.Minted = map[string]string{}
			}
			s.Minted[m.name] = "token-of-" + m.name + "#" + m.kid
		} else {
			cm.Error = "GET /version: connection refused"
		}
		s.Members = append(s.Members, cm)
	}
	review := func(kid string) []check.Cell {
		var cells []check.Cell
		for _, v := range ms {
			c := check.Cell{Member: v.name}
			switch {
			case v.down:
				c.Cause = "unreachable"
			case contains(accepts(v), kid):
				c.Accepted = true
			default:
				c.Cause, c.Message = "signing-key-unknown", "invalid bearer token, square/go-jose: error in cryptographic primitive"
			}
			cells = append(cells, c)
		}
		return cells
	}
	s.Matrix = &check.Matrix{Members: names}
	for _, m := range ms {
		row := check.Row{Token: "minted through " + m.name, Via: m.name, KID: m.kid}
		if m.down {
			row.Error = "member unreachable"
			for _, v := range ms {
				row.Cells = append(row.Cells, check.Cell{Member: v.name, Cause: "not-minted"})
			}
		} else {
			row.Cells = review(m.kid)
		}
		s.Matrix.Rows = append(s.Matrix.Rows, row)
	}
	for _, t := range cfg.Tokens {
		_, kid, _ := strings.Cut(t.Token, "#") // the kid it was minted with
		s.Tokens = append(s.Tokens, check.Row{Token: t.Name, KID: kid, Cells: review(kid)})
	}
	return s
}

func accepts(m fakeMember) []string {
	if m.accepts != nil {
		return m.accepts
	}
	return []string{m.kid}
}

func contains(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

// script returns a Fetch that serves the i-th member list on the i-th call (the last one after).
func script(steps ...[]fakeMember) func(context.Context, check.MembersConfig) (*check.Snapshot, error) {
	i := 0
	return func(_ context.Context, cfg check.MembersConfig) (*check.Snapshot, error) {
		ms := steps[min(i, len(steps)-1)]
		i++
		return fakeSnapshot(cfg, ms), nil
	}
}
