// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"fmt"
	"slices"
	"strings"

	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// The KubeadmControlPlane manager's provider label, the gate and the hook that decide an in-place
// update (cluster-api v1.14.2: feature/feature.go:86,110 — alpha, off by default;
// controlplane/kubeadm/reconcilers/kubeadmcontrolplane/inplace_canupdatemachine.go:44-84).
const (
	kcpProvider      = "control-plane-kubeadm"
	inPlaceGate      = "InPlaceUpdates"
	canUpdateMachine = "CanUpdateMachine"
)

// inPlaceSince: in-place updates arrived in Cluster API v1.12.0.
func inPlaceSince(v string) (has, ok bool) {
	pv, err := parseSemver(v)
	if err != nil {
		return false, false
	}
	return !pv.less(1, 12, 0), true
}

// inPlaceUpdate: with the InPlaceUpdates gate on in KubeadmControlPlane's manager and one runtime
// extension serving CanUpdateMachine, KCP asks the extension, for each machine it would otherwise
// delete, whether it can update it where it stands (rollingUpdate, cluster-api v1.14.2
// controlplane/kubeadm/reconcilers/kubeadmcontrolplane/update.go:104-170): it tries only while
// fewer machines than replicas are up to date, at replicas+maxSurge machines, so with maxSurge 1
// it first adds one machine, updates replicas-1 in place and removes the last; with maxSurge 0 it
// updates every machine in place. A roll started by rolloutAfter (or rolloutBefore) leaves no
// machine eligible (controlplane/kubeadm/pkg/filters.go:62-109).
func inPlaceUpdate(f *facts) []finding.Finding {
	if f.cur.KCP == nil || f.pl.KCP == nil || len(f.roll.Rolled) == 0 {
		return nil
	}
	var exts []string
	seen := map[string]bool{}
	for _, s := range []*input.Set{f.plSet, f.curSet} {
		for _, e := range s.Extensions {
			if e.Serves(canUpdateMachine) && !seen[e.Name] {
				seen[e.Name] = true
				exts = append(exts, e.Name)
			}
		}
	}
	mgr := kcpManager(f)
	gate := mgr != nil && mgr.Gates[inPlaceGate]
	if len(exts) == 0 && !gate {
		return nil // nothing in the inputs asks for in-place updates
	}
	const judge = ": in-place-update-possible not judged"
	if f.capiVersion != "" {
		if has, ok := inPlaceSince(f.capiVersion); ok && !has {
			f.notes = append(f.notes, "Cluster API "+f.capiVersion+" has no in-place updates (v1.12.0 on): every rolled machine is replaced")
			return nil
		}
	}
	switch {
	case mgr == nil:
		f.notes = append(f.notes, "ExtensionConfig "+strings.Join(exts, ", ")+" serves CanUpdateMachine, but KubeadmControlPlane's manager Deployment (label "+input.ProviderLabel+"="+kcpProvider+") is not among the inputs, so its feature gates are unknown"+judge)
		return nil
	case !gate:
		f.notes = append(f.notes, "ExtensionConfig "+strings.Join(exts, ", ")+" serves CanUpdateMachine, but "+mgr.Name+" runs without --feature-gates="+inPlaceGate+"=true: KubeadmControlPlane replaces every rolled machine")
		return nil
	case len(exts) == 0:
		f.notes = append(f.notes, mgr.Name+" runs with "+inPlaceGate+"=true, but no ExtensionConfig among the inputs serves CanUpdateMachine (give them: kubectl get extensionconfigs -o yaml)"+judge)
		return nil
	}
	if slices.ContainsFunc(f.roll.Reasons, func(r string) bool { return r == Reroll || strings.HasPrefix(r, "rolloutAfter") }) {
		f.notes = append(f.notes, "The roll is started by rolloutAfter: KubeadmControlPlane updates no machine in place for it (rolloutAfter makes every older machine ineligible), it replaces them")
		return nil
	}
	n := min(len(f.roll.Rolled), f.pl.KCP.Replicas-f.pl.KCP.MaxSurge)
	if n <= 0 {
		f.notes = append(f.notes, fmt.Sprintf("%d replica with maxSurge %d: KubeadmControlPlane adds the new machine first and then has as many up to date as replicas, so it updates none in place", f.pl.KCP.Replicas, f.pl.KCP.MaxSurge))
		return nil
	}
	order := "With maxSurge 0 it updates every one."
	if f.pl.KCP.MaxSurge > 0 {
		order = "With maxSurge 1 it adds one machine first, updates in place while it has replicas+1, and removes the last old one."
	}
	msg := fmt.Sprintf("KubeadmControlPlane %s may update %d of the %d rolled machines in place: %s runs with %s=true and ExtensionConfig %s serves CanUpdateMachine. %s Where the extension answers yes, the machine is not replaced: its control-plane static pods restart on the same machine while the load balancer keeps it in rotation (no drain, no deregistration), and a failed update has no rollback. The add/remove steps hold only for machines the extension declines.",
		f.pl.KCP.Name, n, len(f.roll.Rolled), mgr.Name, inPlaceGate, strings.Join(exts, ", "), order)
	if len(exts) > 1 {
		msg = fmt.Sprintf("KubeadmControlPlane %s is asked to update machines in place (%s runs with %s=true), but %d ExtensionConfigs serve CanUpdateMachine (%s): KubeadmControlPlane fails each reconcile with \"found multiple CanUpdateMachine hooks (...): only one hook is supported\" and the roll does not go on.",
			f.pl.KCP.Name, mgr.Name, inPlaceGate, len(exts), strings.Join(exts, ", "))
	}
	return []finding.Finding{finding.New("in-place-update-possible", msg).On("", "KubeadmControlPlane/"+f.pl.KCP.Name)}
}

// kcpManager is KubeadmControlPlane's manager Deployment among the inputs (planned side first).
func kcpManager(f *facts) *input.Manager {
	for _, s := range []*input.Set{f.plSet, f.curSet} {
		for i, m := range s.Managers {
			if m.Provider == kcpProvider {
				return &s.Managers[i]
			}
		}
	}
	return nil
}
