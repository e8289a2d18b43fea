// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
)

const idNotReady = "member-not-ready"

// checkReadiness names the members that answer but whose /readyz fails, with the failing checks.
// A member still listed in the kubernetes Service's EndpointSlice is an error: pods are sent to it.
func checkReadiness(s *Snapshot) []finding.Finding {
	var out []finding.Finding
	for _, m := range s.Members {
		if !m.Reachable || len(m.NotReady) == 0 {
			continue
		}
		failing := strings.Join(m.NotReady, ", ")
		msg := fmt.Sprintf("member %s answers but its /readyz fails %s: a load balancer that checks /readyz takes it out, one that does not sends clients to a member that cannot serve them", m.Name, failing)
		sev := catalogue.Warning
		if slices.Contains(m.FoundBy, "endpointslice") {
			msg = fmt.Sprintf("member %s is listed in the EndpointSlice of default/kubernetes but its /readyz fails %s: pods that reach the API through the kubernetes Service are still sent to it", m.Name, failing)
			sev = catalogue.Error
		}
		out = append(out, finding.New(idNotReady, msg,
			finding.Evidence{Member: m.Name, Key: "failing readiness checks", Value: failing},
			finding.Evidence{Member: m.Name, Key: "found by", Value: strings.Join(m.FoundBy, ",")}).On(m.Name, m.URL).WithSeverity(sev))
	}
	return out
}
