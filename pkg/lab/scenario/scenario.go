// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/report"
)

// Scenario is one fault from the field, reproduced on a running lab.
type Scenario struct {
	Name    string
	Summary string
	// Members is the smallest lab the scenario needs (default 2).
	Members int
	// Version, when set, is the line the lab must start on (mixed-version-roll starts old).
	Version string
	// Run performs the scenario on env.Lab and returns what it saw. It leaves the lab usable for the
	// next scenario where it can (members it added are removed again).
	Run func(ctx context.Context, env *Env) (*Evidence, error)
	// CloudEra, instead of Run, names the era of the cloud lab the scenario runs in (see
	// cloudlab.Eras): a lab with nodes and a vCenter simulator, run by the credwatch-cloudlab
	// program, whose step evidence becomes Evidence.Cloud.
	CloudEra string
}

// All is the registry: every scenario, in the order they are documented.
func All() []Scenario {
	return []Scenario{
		{Name: "healthy-roll", Summary: "every member replaced one by one with the shared key and issuer: no 401s", Run: healthyRoll},
		{Name: "key-drift", Summary: "a new member with its own service-account key joins the load balancer", Run: keyDrift},
		{Name: "issuer-change", Summary: "a new member whose first issuer differs, without and then with the old issuer kept", Run: issuerChange},
		{Name: "audience-change", Summary: "a new member with different --api-audiences", Run: audienceChange},
		{Name: "bound-object-deleted", Summary: "a pod is deleted while its token is still in use", Run: boundObjectDeleted},
		{Name: "serviceaccount-recreated", Summary: "a service account is deleted and re-created with the same name", Run: serviceAccountRecreated},
		{Name: "clock-skew", Summary: "tokens from a member whose clock runs ahead (or behind) are presented to the others", Run: clockSkew},
		{Name: "etcd-member-removed", Summary: "a member's etcd member is removed while the load balancer keeps sending to its apiserver", Run: etcdMemberRemoved},
		{Name: "mixed-version-roll", Summary: "an old-line control plane replaced by new-line members one by one", Version: lab.OldVersion, Run: mixedVersionRoll},
		{Name: "cloud-password-rotated", Summary: "the vSphere account's password is rotated under a kubespray cluster (in-tree provider): new nodes never register", Version: lab.InTreeCloudVersion, CloudEra: "in-tree"},
		{Name: "cloud-password-rotated-external", Summary: "the same with the vSphere CPI as a DaemonSet: a node that joins stays tainted, its Pods Pending", CloudEra: "external"},
		{Name: "cloud-password-rotated-openstack", Summary: "the OpenStack account's password is reset in a real Keystone under the OpenStack cloud controller manager: its token is revoked, a new node stays uninitialized", CloudEra: "external-openstack"},
	}
}

// Get returns the scenario with that name.
func Get(name string) (Scenario, bool) {
	for _, s := range All() {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// Names lists the registered scenario names.
func Names() []string {
	var out []string
	for _, s := range All() {
		out = append(out, s.Name)
	}
	return out
}

// RunOptions configures Run: a fresh lab for one scenario.
type RunOptions struct {
	Dir     string        // lab state directory (required)
	BinDir  string        // lab binaries (default: lab.DefaultBinDir)
	Version string        // lab line (default: the scenario's, else lab.DefaultVersion)
	Members int           // default: the scenario's minimum, at least 2
	Window  time.Duration // default DefaultWindow
	Log     io.Writer     // progress (nil: discard)
	// CloudLab is the credwatch-cloudlab program for the cloud scenarios (default: beside this
	// executable, else on PATH).
	CloudLab string
}

// Run starts a lab, runs s on it and tears the lab down (also on failure).
func Run(ctx context.Context, s Scenario, o RunOptions) (ev *Evidence, err error) {
	if s.Version != "" && o.Version != "" && o.Version != s.Version {
		return nil, fmt.Errorf("scenario %s always starts on %s (asked for %s)", s.Name, s.Version, o.Version)
	}
	if s.CloudEra != "" {
		return runCloud(ctx, s, o)
	}
	version := o.Version
	if s.Version != "" {
		version = s.Version
	}
	members := max(o.Members, s.Members, 2)
	l, err := lab.Up(ctx, lab.Options{Dir: o.Dir, BinDir: o.BinDir, Members: members, Version: version, Log: o.Log})
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
	ev, err = s.Run(ctx, &Env{Lab: l, Window: o.Window, Log: o.Log})
	if err != nil {
		return ev, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	return ev, nil
}

// List is the registry as a printable document.
type List struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Items      []Entry `json:"items"`
}

// Entry is one scenario in List.
type Entry struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	Version string `json:"version,omitempty"`
}

// NewList returns the registry as a List.
func NewList() List {
	l := List{APIVersion: report.APIVersion, Kind: "ScenarioList"}
	for _, s := range All() {
		l.Items = append(l.Items, Entry{Name: s.Name, Summary: s.Summary, Version: s.Version})
	}
	return l
}

// WriteTable prints the registry.
func (l List) WriteTable(w io.Writer, _ report.TableOptions) error {
	tw := report.NewTabWriter(w)
	report.Row(tw, "NAME", "STARTS ON", "WHAT HAPPENS")
	for _, e := range l.Items {
		v := e.Version
		if v == "" {
			v = "--version (default " + lab.DefaultVersion + ")"
		}
		report.Row(tw, e.Name, v, e.Summary)
	}
	return tw.Flush()
}
