// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package preflight predicts, before a control-plane roll starts, what it will break: it
// compares the current and the planned control plane (Cluster API, kubeadm, static pods, kops),
// models the roll machine by machine with a trust matrix per step, and reports findings from the
// shared catalogue. It reads only what it is given and writes nothing.
package preflight

import (
	"errors"
	"fmt"
	"slices"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// Config is one preflight run.
type Config struct {
	Current, Planned *input.Set
	// CAPIVersion overrides the Cluster API version read from clusterctl Provider objects.
	CAPIVersion string
	// Reroll predicts a roll of the current spec, as rolloutAfter or a certificate renewal
	// starts one: every machine is replaced by one of the same spec. Planned stays nil.
	Reroll bool
	// Signer is what the planned members' external signer declares (--signer-max-token-expiration).
	Signer Signer
}

// Reroll is the reason given for every machine of a roll of the current spec.
const Reroll = "a roll of the current spec (rolloutAfter, certificate renewal)"

// ErrNothingToCompare is a side with no control-plane object preflight reads.
var ErrNothingToCompare = errors.New("no KubeadmControlPlane, kubeadm ClusterConfiguration, kube-apiserver static pod or kops Cluster")

// Run predicts the roll from current to planned.
func Run(cfg Config) (*Report, error) {
	if cfg.Reroll {
		if cfg.Planned != nil {
			return nil, errors.New("a roll of the current spec takes no planned side")
		}
		if cfg.Current != nil {
			cfg.Planned = cfg.Current.Spec()
			cfg.Planned.Files = []string{"the current spec, rolled again"}
		}
	}
	for _, side := range []struct {
		name string
		s    *input.Set
	}{{"current", cfg.Current}, {"planned", cfg.Planned}} {
		if side.s == nil || side.s.Empty() {
			return nil, fmt.Errorf("%s: %w", side.name, ErrNothingToCompare)
		}
		if k := side.s.KCPs; len(k) > 1 {
			// Which one rolls is not for preflight to guess: the others would be ignored silently.
			return nil, fmt.Errorf("%s: %d KubeadmControlPlanes (%s; %s): give one control plane per side", side.name, len(k), k[0].Object, k[1].Object)
		}
	}
	if c, p := cfg.Current.ClusterName(), cfg.Planned.ClusterName(); c != "" && p != "" && c != p {
		return nil, fmt.Errorf("planned files are for cluster %q, current for %q", p, c)
	}
	cur, pl := newPlane(cfg.Current), newPlane(cfg.Planned)
	if cur.Source != pl.Source {
		return nil, fmt.Errorf("current is a %s control plane, planned a %s one: preflight compares like with like", cur.Source, pl.Source)
	}
	signerCreds(cur, cfg.Current, endpoint(pl) != "")
	signerCreds(pl, cfg.Planned, endpoint(cur) != "")
	f := &facts{cur: cur, pl: pl, curSet: cfg.Current, plSet: cfg.Planned, capiVersion: cfg.CAPIVersion, signer: cfg.Signer,
		notes: slices.Concat(cfg.Current.Notes, cur.Notes, cfg.Planned.Notes)}
	if f.capiVersion == "" {
		f.capiVersion = providerVersion(f, "ControlPlaneProvider")
	}
	if f.capiVersion == "" {
		f.capiVersion = providerVersion(f, "CoreProvider")
	}
	f.roll = planRoll(cur, pl, cfg.Reroll)
	var fs []finding.Finding
	for _, c := range checks() {
		fs = append(fs, c(f)...)
	}
	fs = append(fs, noChange(f, fs)...)
	locate(fs, cfg.Planned, cfg.Current)
	finding.Sort(fs)
	r := &Report{APIVersion: APIVersion, Kind: "PreflightReport", Cluster: cur.Cluster, Source: cur.Source,
		Current: summary(cur, cfg.Current), Planned: summary(pl, cfg.Planned), CAPIVersion: f.capiVersion,
		Steps: f.roll.Steps, Findings: fs, Notes: f.notes}
	r.Ignored = append(cfg.Current.SortedIgnored(), cfg.Planned.SortedIgnored()...)
	if r.Steps == nil {
		r.Steps = []Step{}
	}
	return r, nil
}

// APIVersion of the report document.
const APIVersion = "credwatch.dev/v1alpha1"

// Report is the prediction.
type Report struct {
	APIVersion  string             `json:"apiVersion"`
	Kind        string             `json:"kind"`
	Cluster     string             `json:"cluster,omitempty"`
	Source      string             `json:"source"`
	Current     Side               `json:"current"`
	Planned     Side               `json:"planned"`
	CAPIVersion string             `json:"capiVersion,omitempty"`
	Steps       []Step             `json:"steps"`
	Findings    []finding.Finding  `json:"findings"`
	Notes       []string           `json:"notes,omitempty"`
	Ignored     []input.Object     `json:"ignored,omitempty"`
	FailOn      catalogue.Severity `json:"failOn,omitempty"`
	ToolVersion string             `json:"-"`
}

// IDs are the distinct IDs of r's findings, sorted.
func (r *Report) IDs() []string {
	var ids []string
	for _, f := range r.Findings {
		ids = append(ids, f.ID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Side summarises one side's inputs and credentials.
type Side struct {
	Files   []string `json:"files"`
	Members []string `json:"members"`
	Creds   Creds    `json:"creds"`
	// JoinCreds is set when machines that join would run other credentials than the init machine.
	JoinCreds *Creds `json:"joinCreds,omitempty"`
	Version   string `json:"version,omitempty"`
}

func summary(p *Plane, s *input.Set) Side {
	out := Side{Files: slices.Clone(s.Files), Creds: p.Creds, Version: p.Version}
	for _, m := range p.Members {
		out.Members = append(out.Members, m.Name)
	}
	if !p.Creds.equal(p.JoinCreds) {
		jc := p.JoinCreds
		out.JoinCreds = &jc
	}
	return out
}
