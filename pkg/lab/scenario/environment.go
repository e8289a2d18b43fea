// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/capi"
)

// Environment is what a scenario runs in: a plain lab (PlainLab), a cloud era's lab (CloudEra),
// a Cluster API management cluster (ClusterAPI). A new kind of lab is a new Environment, not a
// new field of Scenario.
//
// An environment brings itself up and tears itself down around the scenario in one call, Run,
// because not all of them run in this process: a cloud era's lab, its steps and its teardown are
// the credwatch-cloudlab program's.
type Environment interface {
	// String describes the environment in a few words, as `credwatch lab scenario --list` shows
	// it ("lab v1.30.14", "cloud in-tree (v1.29.15)").
	String() string
	// StartsOn is the kube-apiserver line the environment always starts on, whatever
	// RunOptions.Version asks; "" when the options choose the line (or the environment does not
	// read RunOptions.Version).
	StartsOn() string
	// Run brings the environment up, performs s in it and tears it down again, also on failure.
	Run(ctx context.Context, s Scenario, o RunOptions) (*Evidence, error)
}

// PlainLab is a lab of real etcd members and kube-apiservers behind a load balancer (package
// lab): RunOptions.Members of them, at least the scenario's Members and 2.
type PlainLab struct {
	// Version, when set, is the line the lab always starts on (mixed-version-roll starts old);
	// otherwise RunOptions.Version chooses it (default lab.DefaultVersion).
	Version string
}

// String is "lab V", or "lab (--version, default V)" when the options choose the line.
func (p PlainLab) String() string {
	if p.Version != "" {
		return "lab " + p.Version
	}
	return "lab (--version, default " + lab.DefaultVersion + ")"
}

// StartsOn is p.Version.
func (p PlainLab) StartsOn() string { return p.Version }

// Run starts the lab, runs s.Run on it and stops it.
func (p PlainLab) Run(ctx context.Context, s Scenario, o RunOptions) (*Evidence, error) {
	if err := checkLine(s.Name, p.Version, o.Version); err != nil {
		return nil, err
	}
	version := o.Version
	if p.Version != "" {
		version = p.Version
	}
	return runOnLab(ctx, s, o, lab.Options{Version: version, Members: max(o.Members, s.Members, 2)})
}

// ClusterAPI is a Cluster API management cluster: a lab of one member on the line of the
// release RunOptions.CAPI chooses (capi.LineOf), on which the scenario starts the real Cluster
// API managers with the LabCluster balancer RunOptions.CAPI describes.
type ClusterAPI struct{}

// String names the release's flag and its default.
func (ClusterAPI) String() string { return "Cluster API (--capi, default " + capi.V181 + ")" }

// StartsOn is "": the release chooses the line.
func (ClusterAPI) StartsOn() string { return "" }

// Run starts the management lab, runs s.Run on it and stops it. RunOptions.Version, when set,
// must be the release's line.
func (ClusterAPI) Run(ctx context.Context, s Scenario, o RunOptions) (*Evidence, error) {
	release := o.CAPI.complete().Version
	line := capi.LineOf(release)
	if o.Version != "" && o.Version != line.Kubernetes {
		return nil, fmt.Errorf("scenario %s with Cluster API %s starts on %s (asked for %s)", s.Name, release, line.Kubernetes, o.Version)
	}
	return runOnLab(ctx, s, o, lab.Options{Version: line.Kubernetes, Members: 1})
}

// SignerLab is a lab whose members sign through external JWT signers (lab.Options.ExternalSigner:
// one signer per member host, no key files) on lab.DefaultVersion, the line where the signer is
// GA: RunOptions.Members members, at least the scenario's Members and 2. Its members keep audit
// logs (lab.Options.Audit), which trace a rejected token to the member that minted it.
type SignerLab struct {
	// RefreshHint is the refresh hint the signers start with (default DefaultSignerRefreshHint).
	RefreshHint time.Duration
}

// DefaultSignerRefreshHint is a SignerLab's refresh hint: short, so that a member whose signer
// fails is stale within seconds.
const DefaultSignerRefreshHint = 3 * time.Second

// String is "lab V, external signers".
func (SignerLab) String() string { return "lab " + lab.DefaultVersion + ", external signers" }

// StartsOn is lab.DefaultVersion.
func (SignerLab) StartsOn() string { return lab.DefaultVersion }

// LabOptions are the lab options of the environment for a lab of members.
func (e SignerLab) LabOptions(members int) lab.Options {
	hint := e.RefreshHint
	if hint == 0 {
		hint = DefaultSignerRefreshHint
	}
	return lab.Options{Version: lab.DefaultVersion, Members: members, ExternalSigner: true, SignerRefreshHint: hint, Audit: true}
}

// Run starts the lab, runs s.Run on it and stops it.
func (e SignerLab) Run(ctx context.Context, s Scenario, o RunOptions) (*Evidence, error) {
	if err := checkLine(s.Name, lab.DefaultVersion, o.Version); err != nil {
		return nil, err
	}
	return runOnLab(ctx, s, o, e.LabOptions(max(o.Members, s.Members, 2)))
}

// checkLine refuses a line asked for that differs from the one scenario name always starts on
// (fixed, when set).
func checkLine(name, fixed, asked string) error {
	if fixed != "" && asked != "" && asked != fixed {
		return fmt.Errorf("scenario %s always starts on %s (asked for %s)", name, fixed, asked)
	}
	return nil
}

// runOnLab starts a lab as lo says (its directory, binaries and log from o), runs s.Run on it and
// tears the lab down (also on failure).
func runOnLab(ctx context.Context, s Scenario, o RunOptions, lo lab.Options) (ev *Evidence, err error) {
	if s.Run == nil {
		return nil, fmt.Errorf("scenario %s: no steps to run on a lab", s.Name)
	}
	lo.Dir, lo.BinDir, lo.Log = o.Dir, o.BinDir, o.Log
	l, err := lab.Up(ctx, lo)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: start lab: %w", s.Name, err)
	}
	defer func() {
		downCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if derr := l.Down(downCtx); derr != nil {
			err = errors.Join(err, fmt.Errorf("scenario %s: stop lab: %w", s.Name, derr))
		}
	}()
	ev, err = s.Run(ctx, &Env{Lab: l, Window: o.Window, Log: o.Log, CAPI: o.CAPI})
	if ev != nil {
		ev.Restarts = restarts(l.Status(ctx, false))
	}
	if err != nil {
		return ev, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	return ev, nil
}
