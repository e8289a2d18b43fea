// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"slices"
	"strings"

	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/report"
)

const idOwnRequests = "own-requests-refused"

// ownSources are the sources credwatch reads with its own credentials through the cluster
// endpoint (the kubeconfig's server, or the kubernetes Service in a pod): a 401, a timeout, a 5xx
// or a refused connection there means credwatch itself is affected. The trust matrix is among
// them (the probe account's GET, and the TokenRequests when not one token could be minted), and
// so are the Cluster API view and the static pods' logs a watcher reads. Left out: the members'
// /metrics (each member asked directly: member-unreachable and member-not-ready speak for it),
// the public issuer (a server outside the cluster) and the members' log files (local files).
func ownSources() []string {
	return []string{SrcMembers, SrcEndpointSlices, SrcStaticPods, SrcMatrix, SrcPods, SrcServiceAccounts,
		SrcSecrets, SrcLeases, SrcNodes, SrcNodeEvents, SrcCloud, SrcClusterAPI, SrcPodLogs}
}

// checkOwnRequests raises one finding when some of credwatch's own requests were refused or
// failed (ownSources, classed by classifyFailure), naming for each class the sources it hit and
// the first error: a watcher that cannot see because it is itself affected says so rather than
// going quiet. A source refused by authorization (403) or not fetched on purpose is not one.
func checkOwnRequests(s *Snapshot) []finding.Finding {
	type failed struct {
		sources []string
		first   string
	}
	by := map[failure]*failed{}
	var ev []finding.Evidence
	for _, src := range ownSources() { // in a fixed order, so the message is the same each time
		reason := s.Missing(src)
		class, part := classifyParts(reason)
		if class == failNone {
			continue
		}
		f := by[class]
		if f == nil {
			f = &failed{first: plainText(part)}
			by[class] = f
		}
		f.sources = append(f.sources, src)
		ev = append(ev, finding.Evidence{Object: src, Key: string(class), Value: plainText(reason)})
	}
	if len(ev) == 0 {
		return nil
	}
	var says []string
	for _, class := range failureOrder() {
		if f := by[class]; f != nil {
			says = append(says, strings.Join(f.sources, ", ")+" "+class.phrase()+" ("+f.first+")")
		}
	}
	slices.SortStableFunc(ev, func(a, b finding.Evidence) int {
		return slices.Index(failureOrder(), failure(a.Key)) - slices.Index(failureOrder(), failure(b.Key))
	})
	msg := "credwatch's own requests failed: " + strings.Join(says, "; ") +
		"; what it reports of them is from an earlier interval or missing"
	return []finding.Finding{finding.New(idOwnRequests, msg, ev...)}
}

// plainText is an error's text as a finding may carry it: plain words, bounded, redacted.
func plainText(s string) string { return redact.Text(report.Plain(s)) }
