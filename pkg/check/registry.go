// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"time"

	"github.com/credwatch/credwatch/pkg/finding"
)

// A Check is one diagnosis: a pure function of the snapshot.
type Check struct {
	Name        string
	Description string
	// Needs are the sources it reads; when one is missing the check is skipped with that reason.
	Needs []string
	// Core checks decide the question check exists for (which member rejects which tokens); when
	// one is skipped the result is partial (exit code 3).
	Core bool
	Run  func(s *Snapshot) []finding.Finding
}

// Registry is the explicit list of checks, in the order they run.
func Registry() []Check {
	return []Check{
		{Name: "members", Description: "every member answers directly", Needs: []string{SrcMembers}, Core: true, Run: checkMembers},
		{Name: "readiness", Description: "every member that answers is ready (/readyz)", Needs: []string{SrcMembers}, Run: checkReadiness},
		{Name: "lb-routing", Description: "the kubeconfig's server (a load balancer) sends no new connection to a member that is not ready", Needs: []string{SrcMembers}, Run: checkRouting},
		{Name: "key-drift", Description: "every member signs with and accepts the same keys", Needs: []string{SrcMembers, SrcMatrix}, Core: true, Run: checkKeyDrift},
		{Name: "issuer-drift", Description: "every member accepts the issuers the others sign with", Needs: []string{SrcMembers, SrcMatrix}, Core: true, Run: checkIssuerDrift},
		{Name: "audience-drift", Description: "members' API audiences overlap", Needs: []string{SrcMembers, SrcMatrix}, Core: true, Run: checkAudienceDrift},
		{Name: "public-issuer", Description: "a public issuer publishes the members' keys", Needs: []string{SrcMembers, SrcPublicIssuer}, Run: checkPublicIssuer},
		{Name: "legacy-tokens", Description: "secret-based tokens in use", Needs: []string{SrcSecrets}, Run: checkLegacyTokens},
		{Name: "stale-tokens", Description: "tokens used past their warnafter", Needs: []string{SrcMetrics}, Run: checkStaleTokens},
		{Name: "external-signers", Description: "members' external JWT signers serve the same keys and keep them fresh", Needs: []string{SrcMembers, SrcMetrics}, Run: checkSigners},
		{Name: "authentication-config", Description: "members run the same AuthenticationConfiguration, loaded their last edit, and their JWT authenticators hold the same keys", Needs: []string{SrcMembers, SrcMetrics}, Run: checkAuthn},
		{Name: "controllers", Description: "control-plane controllers renew their leases", Needs: []string{SrcLeases}, Run: checkControllers},
		{Name: "nodes", Description: "nodes initialized by the cloud provider", Needs: []string{SrcNodes}, Run: checkNodes},
		{Name: "kubelets", Description: "no kubelet keeps restarting (its Starting Events) without posting its node's status", Needs: []string{SrcNodes, SrcNodeEvents}, Run: checkKubeletRestarts},
		{Name: "capi-roll", Description: "KubeadmControlPlane goes on with its roll (with --capi-cluster)", Run: checkCAPIRoll},
		{Name: "cloud-credentials", Description: "cloud-provider credentials found, judged and (with --cloud-login) tested; their symptoms", Needs: []string{SrcCloud}, Run: checkCloud},
		{Name: "own-requests", Description: "credwatch's own requests through the cluster endpoint are answered: no 401, timeout, 5xx or refused connection", Run: checkOwnRequests},
	}
}

// Skipped is a check that did not run, and why.
type Skipped struct {
	Check  string `json:"check"`
	Reason string `json:"reason"`
	Core   bool   `json:"core"`
}

// SkipGroup is the checks skipped for one reason.
type SkipGroup struct {
	Checks []string
	Reason string
}

// SkippedByReason groups the skipped checks by reason, in the order each reason first appears:
// one source that could not be read skips every check that needs it, and a diagnostic says so once.
func (r *Report) SkippedByReason() []SkipGroup {
	var out []SkipGroup
	at := map[string]int{}
	for _, s := range r.Skipped {
		i, ok := at[s.Reason]
		if !ok {
			i = len(out)
			at[s.Reason] = i
			out = append(out, SkipGroup{Reason: s.Reason})
		}
		out[i].Checks = append(out[i].Checks, s.Check)
	}
	return out
}

// Run applies checks to the snapshot and assembles the report.
func Run(s *Snapshot, checks []Check) *Report {
	r := &Report{APIVersion: reportAPIVersion, Kind: "CheckReport", Server: s.Server, CheckedAt: s.Now.UTC().Truncate(time.Second),
		Members: s.Members, ClusterAPI: s.ClusterAPI, Matrix: s.Matrix, Tokens: s.Tokens, PublicIssuer: s.Public, Sources: s.Sources}
	r.Unreachable = !anyReachable(s)
	r.byCheck = map[string][]finding.Finding{}
	for _, c := range checks {
		r.order = append(r.order, c.Name)
		reason := ""
		for _, src := range c.Needs {
			if why := s.Missing(src); why != "" {
				reason = src + ": " + why
				break
			}
		}
		if reason == "" && r.Unreachable && c.Core {
			reason = "no member could be reached"
		}
		if reason != "" {
			r.Skipped = append(r.Skipped, Skipped{Check: c.Name, Reason: reason, Core: c.Core})
			f := finding.New(idCheckSkipped, "check "+c.Name+" skipped: "+reason,
				finding.Evidence{Key: "check", Value: c.Name}, finding.Evidence{Key: "reason", Value: reason})
			f.Object = c.Name
			r.Findings = append(r.Findings, f)
			if c.Core {
				r.Partial = true
			}
			continue
		}
		fs := c.Run(s)
		r.byCheck[c.Name] = fs
		r.Findings = append(r.Findings, fs...)
	}
	if r.Unreachable {
		r.Partial = true
	}
	r.Differences = differences(s)
	r.Inventory = inventory(s)
	r.Liveness = livenessOf(s)
	r.Cloud = cloudOf(s)
	finding.Sort(r.Findings)
	if r.Findings == nil {
		r.Findings = []finding.Finding{}
	}
	return r
}

func anyReachable(s *Snapshot) bool {
	for _, m := range s.Members {
		if m.Reachable {
			return true
		}
	}
	return false
}

// FindingsOf returns the findings check name raised (nil when it was skipped or raised none).
func (r *Report) FindingsOf(name string) []finding.Finding { return r.byCheck[name] }
