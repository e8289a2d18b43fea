// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"strings"

	"github.com/credwatch/credwatch/pkg/finding"
)

// blocksRoll reports whether a KubeadmControlPlane condition stops a roll: from Cluster API
// v1.13 a missing cluster certificate (the <cluster>-sa Secret among them) is not generated again
// once the control plane is initialized, and KubeadmControlPlane joins no new machine while
// CertificatesAvailable is False (cluster-api v1.14.2
// controlplane/kubeadm/reconcilers/kubeadmcontrolplane/preflight.go:99-108).
func blocksRoll(c Condition) bool {
	return c.Type == "CertificatesAvailable" && c.Status == "False"
}

// checkCAPIRoll names a roll KubeadmControlPlane will not go on with: the condition and its
// message, and the Machines that wait to be replaced. Without --capi-cluster it has nothing to
// read and says nothing.
func checkCAPIRoll(s *Snapshot) []finding.Finding {
	ca := s.ClusterAPI
	if ca == nil || ca.ControlPlane == nil {
		return nil
	}
	cp := ca.ControlPlane
	var out []finding.Finding
	for _, c := range cp.Conditions {
		if !blocksRoll(c) {
			continue
		}
		var waiting []string
		for _, m := range ca.Machines {
			if m.UpToDate != nil && !*m.UpToDate {
				waiting = append(waiting, m.Name)
			}
		}
		wait := "no machine is replaced"
		switch {
		case len(waiting) > 0:
			wait = "waiting to be replaced: " + strings.Join(waiting, ", ")
		case cp.UpToDate < cp.Replicas:
			wait = fmt.Sprintf("%d machines wait to be replaced", cp.Replicas-cp.UpToDate)
		}
		msg := fmt.Sprintf("KubeadmControlPlane %s joins no new machine while %s is %s (%s): %q. %d of %d machines up to date; %s.",
			cp.Name, c.Type, c.Status, c.Reason, c.Message, cp.UpToDate, cp.Replicas, wait)
		out = append(out, finding.New("capi-roll-blocked", msg).On("", "KubeadmControlPlane/"+cp.Name))
	}
	return out
}
