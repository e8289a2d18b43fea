// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"slices"
	"strings"
)

// memberMemory is what watch remembers of the members between intervals: the last interval's
// members, so that an interval that read less than all of them does not make them vanish.
type memberMemory struct {
	last []MemberState // nil before the first interval
}

// complete fills in cur what this interval did not read, from the last interval, and then
// remembers cur. When /metrics was not read, each member keeps its last counters, so they
// neither vanish nor count as new. When discovery failed (the EndpointSlice list timed out
// through the load balancer), the members it did not list stay: not listed is not left.
func (mm *memberMemory) complete(cur *State, readMetrics, listed bool) {
	if mm.last != nil {
		prev := &State{Members: mm.last}
		if !readMetrics {
			for i := range cur.Members {
				if p, ok := prev.Member(cur.Members[i].Name); ok && cur.Members[i].AuthFailures == nil {
					cur.Members[i].AuthFailures = p.AuthFailures
				}
			}
		}
		if !listed {
			for _, m := range prev.Members {
				if _, ok := cur.Member(m.Name); !ok {
					cur.Members = append(cur.Members, m)
				}
			}
			slices.SortFunc(cur.Members, func(a, b MemberState) int { return strings.Compare(a.Name, b.Name) })
		}
	}
	mm.last = cur.Members
}
