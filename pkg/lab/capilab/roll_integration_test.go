// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab_test

import (
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
)

// TestIntegrationCAPIRoll rolls the control plane 1 → 2 → 1 with the real KubeadmControlPlane
// v1.8.1 (spec.rolloutAfter, maxSurge 1): a second machine joins with kubeadm join, then the old
// one's etcd member is removed and the machine deleted. The LabCluster's balancer checks TLS only
// and deregisters a machine when its LabMachine is deleted (CAPA before v2.4), so the old member
// stays in rotation after its etcd member is gone: the test measures that window.
func TestIntegrationCAPIRoll(t *testing.T) {
	c, ctx, _ := startCAPILab(t, capi.V181, infra.LoadBalancer{HealthCheck: lb.CheckTLS, Deregistration: infra.OnMachineDelete})
	if _, err := c.WaitControlPlane(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r, err := c.Roll(ctx)
	for _, p := range r.Phases {
		t.Logf("roll: +%6.1fs %-22s %s", p.At.Sub(r.Started).Seconds(), p.What, p.Machine)
	}
	for _, e := range c.Events() {
		t.Logf("timeline: %s", e)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FIGURE capi v1.8.1 roll 1 -> 2 -> 1 in %s: %v -> %v", r.Duration, r.Before, r.After)
	if len(r.Before) != 1 || len(r.After) != 1 || r.Before[0] == r.After[0] {
		t.Fatalf("roll replaced %v with %v, want one machine by another", r.Before, r.After)
	}
	old := r.Before[0]
	removed := r.At(capilab.PhaseMemberRemoved, old)
	var dereg time.Time
	for _, e := range c.Events() {
		if e.Machine == old && e.Step == infra.Deregister {
			dereg = e.Time
		}
	}
	if removed.IsZero() || dereg.IsZero() {
		t.Fatalf("etcd member of %s removed at %v, deregistered at %v: want both", old, removed, dereg)
	}
	t.Logf("FIGURE capi v1.8.1 tls on-machine-delete: %s in rotation %s after its etcd member was removed", old, dereg.Sub(removed).Round(100*time.Millisecond))
}
