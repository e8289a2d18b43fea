// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/report"
)

// Hypothesis is one ranked explanation of the failures, with its evidence and remedy.
type Hypothesis struct {
	Rank         int                `json:"rank"`
	Cause        string             `json:"cause"`
	Severity     catalogue.Severity `json:"severity"`
	Title        string             `json:"title"`
	Hosts        []string           `json:"hosts"`
	Components   []string           `json:"components"`
	Count        int                `json:"count"`
	First        time.Time          `json:"first,omitzero"`
	Last         time.Time          `json:"last,omitzero"`
	Concentrated bool               `json:"concentrated"`
	Statement    string             `json:"statement"`
	Context      []string           `json:"context,omitempty"`
	Remedy       string             `json:"remedy"`
	Evidence     []Event            `json:"evidence"`

	score float64
}

// AnyAtLeast reports whether a cause of the verdict is at or above sev (logs --fail-on): never
// for catalogue.None.
func (r *Report) AnyAtLeast(sev catalogue.Severity) bool {
	for _, h := range r.Verdict {
		if h.Severity.AtLeast(sev) {
			return true
		}
	}
	return false
}

// concentration is the share of a cause's lines one host must have for the cause to be called
// that host's problem.
const concentration = 0.8

// contextBefore and contextAfter bound the context events that explain a failure.
const (
	contextBefore = 30 * time.Minute
	contextAfter  = 5 * time.Minute
)

// verdict ranks one hypothesis per cause: concentrated on one host (a member that differs from
// the others) first, then by severity and volume; context events close in time are attached.
func verdict(c *catalogue.Catalogue, r *Report) []Hypothesis {
	type acc struct {
		count       int
		hosts       map[string]int
		components  map[string]bool
		first, last time.Time
		firstHost   string
		evidence    []Event
	}
	byCause := map[string]*acc{}
	var causes []string
	for _, g := range r.Failures {
		if g.Explained != "" {
			continue // the member's named cause accounts for these 401s
		}
		a := byCause[g.Cause]
		if a == nil {
			a = &acc{hosts: map[string]int{}, components: map[string]bool{}}
			byCause[g.Cause] = a
			causes = append(causes, g.Cause)
		}
		a.count += g.Count
		a.hosts[g.Host] += g.Count
		a.components[g.Component] = true
		switch {
		case g.First.IsZero():
		case a.first.IsZero() || g.First.Before(a.first):
			a.first, a.firstHost = g.First, g.Host
		case g.First.Equal(a.first) && g.Host != a.firstHost:
			a.firstHost = "" // a tie names nobody
		}
		if g.Last.After(a.last) {
			a.last = g.Last
		}
		a.evidence = append(a.evidence, g.evidence...)
	}
	oneDay := r.Summary.From.IsZero() || r.Summary.From.Truncate(24*time.Hour).Equal(r.Summary.To.Truncate(24*time.Hour))
	var out []Hypothesis
	for _, cause := range causes {
		a := byCause[cause]
		e, _ := c.Get(cause)
		h := Hypothesis{Cause: cause, Severity: e.Severity, Title: e.Title, Count: a.count, First: a.first, Last: a.last,
			Remedy: strings.TrimSpace(e.Remedy)}
		for host := range a.hosts {
			h.Hosts = append(h.Hosts, host)
		}
		sort.Slice(h.Hosts, func(i, j int) bool {
			if a.hosts[h.Hosts[i]] != a.hosts[h.Hosts[j]] {
				return a.hosts[h.Hosts[i]] > a.hosts[h.Hosts[j]]
			}
			return h.Hosts[i] < h.Hosts[j]
		})
		for comp := range a.components {
			h.Components = append(h.Components, comp)
		}
		sort.Strings(h.Components)
		var others []string
		for _, host := range r.Summary.Hosts {
			if a.hosts[host] == 0 && r.sameRole(host, a.components) {
				others = append(others, host)
			}
		}
		top := h.Hosts[0]
		span := timeSpan(a.first, a.last, oneDay)
		title := lowerFirst(e.Title)
		switch {
		case cause == CauseUnknown:
			sample := ""
			for _, u := range r.Unknown {
				sample = u.Text
				break
			}
			h.Statement = fmt.Sprintf("%s authentication failures with no known cause on %s%s, e.g. %q",
				report.Thousands(a.count), hostsWithCounts(h.Hosts, a.hosts), span, clip(sample, 160))
		case cause == CauseClient:
			h.Statement = fmt.Sprintf("clients were told Unauthorized ×%s on %s%s; the reason is in the API server's log of the member that answered",
				report.Thousands(a.count), hostsWithCounts(h.Hosts, a.hosts), span)
		case float64(a.hosts[top]) >= concentration*float64(a.count) && len(others)+len(h.Hosts) > 1:
			h.Concentrated = true
			rest := "while the other hosts do not log it"
			if len(others) > 0 {
				rest = fmt.Sprintf("while the other hosts (%s) do not log it", hostList(others))
			}
			if len(h.Hosts) > 1 {
				rest = fmt.Sprintf("(%d%% of all; also %s)", 100*a.hosts[top]/a.count, hostsWithCounts(h.Hosts[1:], a.hosts))
				if len(others) > 0 {
					rest += fmt.Sprintf(" while the other hosts (%s) do not log it", hostList(others))
				}
			}
			h.Statement = fmt.Sprintf("host %s: %s: %s ×%s%s %s", top, title, cause, report.Thousands(a.hosts[top]), span, rest)
		default:
			h.Statement = fmt.Sprintf("%s: %s ×%s on %s%s", title, cause, report.Thousands(a.count), hostsWithCounts(h.Hosts, a.hosts), span)
			if len(h.Hosts) > 1 && a.firstHost != "" {
				h.Statement += ", first on " + a.firstHost
			}
		}
		var sameHost bool
		h.Context, sameHost = contextFor(r.Context, a.first, a.last, oneDay, top)
		if len(h.Context) > 0 {
			h.Statement += "; " + strings.Join(h.Context[:min(len(h.Context), 3)], "; ")
		}
		sort.SliceStable(a.evidence, func(i, j int) bool { return earlier(&a.evidence[i], &a.evidence[j]) })
		h.Evidence = a.evidence[:min(len(a.evidence), 4)]
		h.score = float64(e.Severity.Rank())*10 + 5*math.Log10(float64(a.count)+1)
		if h.Concentrated {
			h.score += 10
		}
		if len(h.Context) > 0 {
			h.score += 3
		}
		if sameHost && h.Concentrated {
			h.score += 5 // something happened on the very host that fails
		}
		if cause == CauseClient || cause == CauseUnknown {
			h.score -= 15
		}
		out = append(out, h)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].Cause < out[j].Cause
	})
	for i := range out {
		out[i].Rank = i + 1
	}
	if out == nil {
		out = []Hypothesis{}
	}
	return out
}

// contextFor describes the context events between first−contextBefore and last+contextAfter;
// sameHost reports one on host.
func contextFor(ctx []Group, first, last time.Time, oneDay bool, host string) (_ []string, sameHost bool) {
	if first.IsZero() {
		return nil, false
	}
	type item struct {
		t    time.Time
		text string
	}
	var items []item
	for _, g := range ctx {
		if g.First.IsZero() || g.Last.Before(first.Add(-contextBefore)) || g.First.After(last.Add(contextAfter)) {
			continue
		}
		text := fmt.Sprintf("%s on %s at %s", g.Cause, g.Host, clock(g.First, oneDay))
		if g.Count > 1 {
			text = fmt.Sprintf("%s on %s ×%s from %s to %s", g.Cause, g.Host, report.Thousands(g.Count), clock(g.First, oneDay), clock(g.Last, oneDay))
		}
		items = append(items, item{g.First, text})
		sameHost = sameHost || g.Host == host
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].t.Before(items[j].t) })
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.text
	}
	return out, sameHost
}

func timeSpan(first, last time.Time, oneDay bool) string {
	switch {
	case first.IsZero():
		return ""
	case first.Equal(last):
		return " at " + clock(first, oneDay)
	}
	return " from " + clock(first, oneDay) + " to " + clock(last, oneDay)
}

func clock(t time.Time, oneDay bool) string {
	if oneDay {
		return t.UTC().Format("15:04:05")
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

func hostsWithCounts(hosts []string, counts map[string]int) string {
	parts := make([]string, 0, len(hosts))
	for i, h := range hosts {
		if i == 6 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", h, report.Thousands(counts[h])))
	}
	if len(hosts) == 1 {
		return "host " + parts[0]
	}
	return "hosts " + strings.Join(parts, ", ")
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	word, _, _ := strings.Cut(s, " ")
	if strings.ContainsAny(word[1:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		return s // an acronym or a name such as NodeRestriction
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// sameRole reports whether host has lines of one of components, or of no known component (a
// file named after the member), so that it counts as one of "the other hosts".
func (r *Report) sameRole(host string, components map[string]bool) bool {
	cs := r.hostComponents[host]
	if cs[""] || cs["-"] {
		return true
	}
	for c := range components {
		if cs[c] {
			return true
		}
	}
	return false
}
