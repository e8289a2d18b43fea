// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package fleet checks several clusters at once: credwatch check against each kubeconfig context,
// a bounded number at a time, with one summary per cluster beside its full report.
package fleet

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/report"
)

// Kind is the document kind of a Report.
const Kind = "FleetCheckReport"

// Cluster is one cluster to check: its kubeconfig context and the check configuration for it.
type Cluster struct {
	Context string
	Config  check.Config
}

// CheckFunc checks one cluster. Fetch then Run with check.Registry() is the default.
type CheckFunc func(ctx context.Context, c check.Config) (*check.Report, error)

// Options bound a fleet check.
type Options struct {
	// Parallel is how many clusters are checked at once (default 4).
	Parallel int
	// FailOn is recorded in every cluster's report and the fleet report.
	FailOn catalogue.Severity
	// Check replaces the default check of one cluster (tests).
	Check CheckFunc
}

// Report is the JSON/YAML document kind FleetCheckReport (docs/json.md).
type Report struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	CheckedAt  time.Time          `json:"checkedAt"`
	FailOn     catalogue.Severity `json:"failOn,omitempty"`
	Clusters   []Result           `json:"clusters"`
}

// Result is one cluster's summary and full report (absent when the check could not start).
type Result struct {
	Context string        `json:"context"`
	Server  string        `json:"server"`
	Summary Summary       `json:"summary"`
	Error   string        `json:"error,omitempty"`
	Report  *check.Report `json:"report,omitempty"`
}

// Summary is the row a cluster gets in the fleet table.
type Summary struct {
	// Worst is the highest finding severity ("" when there is none).
	Worst catalogue.Severity `json:"worst,omitempty"`
	// WorstFinding is the ID of the first finding of that severity.
	WorstFinding     string `json:"worstFinding,omitempty"`
	Findings         int    `json:"findings"`
	Members          int    `json:"members"`
	ReachableMembers int    `json:"reachableMembers"`
	// BrokenTrustPairs counts signer→verifier pairs of the trust matrix where the verifier
	// answered and rejected the probe token minted through the signer.
	BrokenTrustPairs int  `json:"brokenTrustPairs"`
	Partial          bool `json:"partial"`
	Unreachable      bool `json:"unreachable"`
}

// Check checks every cluster, at most o.Parallel at a time, and returns their results in the
// order given. A cluster whose check fails is Unreachable with its Error set; the others go on.
func Check(ctx context.Context, clusters []Cluster, o Options) *Report {
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	if o.Check == nil {
		o.Check = checkOne
	}
	r := &Report{APIVersion: report.APIVersion, Kind: Kind, CheckedAt: time.Now().UTC(), FailOn: o.FailOn,
		Clusters: make([]Result, len(clusters))}
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			r.Clusters[i] = result(ctx, c, o)
		})
	}
	wg.Wait()
	return r
}

func result(ctx context.Context, c Cluster, o Options) Result {
	res := Result{Context: c.Context}
	if c.Config.REST != nil {
		res.Server = c.Config.REST.Host
	}
	rep, err := o.Check(ctx, c.Config)
	if err != nil {
		res.Error = err.Error()
		res.Summary.Unreachable = true
		return res
	}
	rep.FailOn = o.FailOn
	res.Report, res.Summary = rep, Summarize(rep)
	return res
}

func checkOne(ctx context.Context, c check.Config) (*check.Report, error) {
	if err := check.Probe(ctx, c); err != nil {
		return nil, fmt.Errorf("cluster not reachable: %w", err)
	}
	snap, err := check.Fetch(ctx, c)
	if err != nil {
		return nil, err
	}
	return check.Run(snap, check.Registry()), nil
}

// Summarize reduces a check report to its fleet row.
func Summarize(r *check.Report) Summary {
	s := Summary{Worst: finding.Worst(r.Findings), Findings: len(r.Findings), Members: len(r.Members),
		Partial: r.Partial, Unreachable: r.Unreachable}
	for _, f := range r.Findings {
		if f.Severity == s.Worst {
			s.WorstFinding = f.ID
			break
		}
	}
	for _, m := range r.Members {
		if m.Reachable {
			s.ReachableMembers++
		}
	}
	if r.Matrix != nil {
		for _, row := range r.Matrix.Rows {
			for _, c := range row.Cells {
				if !c.Accepted && c.Cause != "unreachable" {
					s.BrokenTrustPairs++
				}
			}
		}
	}
	return s
}

// Outcome is what decides a fleet's exit code, the way check decides one cluster's: any cluster
// unreachable (or not checked) first, then any finding at or above failOn, then any partial check.
type Outcome int

// Outcomes, from best to worst as the exit code sees them.
const (
	OK Outcome = iota
	Partial
	Findings
	Unreachable
)

// Outcome of the whole fleet: the worst cluster's.
func (r *Report) Outcome(failOn catalogue.Severity) Outcome {
	worst := OK
	for _, c := range r.Clusters {
		worst = max(worst, c.outcome(failOn))
	}
	return worst
}

func (c Result) outcome(failOn catalogue.Severity) Outcome {
	switch {
	case c.Report == nil || c.Summary.Unreachable:
		return Unreachable
	case finding.AnyAtLeast(c.Report.Findings, failOn):
		return Findings
	case c.Summary.Partial:
		return Partial
	}
	return OK
}
