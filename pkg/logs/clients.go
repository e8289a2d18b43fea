// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"net"
	"strings"
	"time"
)

// clientOf names the client of a 401 the API server logged (audit event or access log): the
// product of its user agent ("metrics-server/v0.0.0 (linux/amd64) …" → metrics-server), else its
// source address.
func clientOf(a *AuditInfo) string {
	if a == nil {
		return ""
	}
	if ua := strings.TrimSpace(a.UserAgent); ua != "" {
		product, _, _ := strings.Cut(ua, " ")
		name, _, _ := strings.Cut(product, "/")
		return name
	}
	if len(a.SourceIPs) > 0 {
		if h, _, err := net.SplitHostPort(a.SourceIPs[0]); err == nil {
			return h
		}
		return a.SourceIPs[0]
	}
	return ""
}

// explainWindow is how near (before the first, after the last) an API server's named cause must
// be to explain a client's 401s on the same member.
const explainWindow = 5 * time.Minute

// explainClientGroups marks each client's 401s on a member with the cause the same member (host
// and component) names nearby: the access log only says Unauthorized, the authentication filter says why. An
// explained group stays in the failures (per client and member) but no longer counts as
// client-unauthorized in the verdict. The named cause with the most lines wins.
func explainClientGroups(failures []Group) {
	for i := range failures {
		g := &failures[i]
		if g.Cause != CauseClient || g.Client == "" {
			continue
		}
		best := -1
		for j := range failures {
			o := &failures[j]
			if o.Host != g.Host || o.Component != g.Component || o.Cause == CauseClient || o.Cause == CauseUnknown || !near(g, o) {
				continue
			}
			if best < 0 || explainsBetter(g, o, &failures[best]) {
				best = j
			}
		}
		if best >= 0 {
			g.Explained = failures[best].Cause
		}
	}
}

// explainsBetter orders candidate explanations of g: lines at a known time before lines
// without one, then more lines, then the cause's name (so the choice does not depend on order).
func explainsBetter(g, a, b *Group) bool {
	ta, tb := !a.First.IsZero() && !g.First.IsZero(), !b.First.IsZero() && !g.First.IsZero()
	if ta != tb {
		return ta
	}
	if a.Count != b.Count {
		return a.Count > b.Count
	}
	return a.Cause < b.Cause
}

// near reports whether o's lines lie within explainWindow of g's (times unknown: near).
func near(g, o *Group) bool {
	if g.First.IsZero() || o.First.IsZero() {
		return true
	}
	return !o.First.After(g.Last.Add(explainWindow)) && !o.Last.Before(g.First.Add(-explainWindow))
}
