// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab_test

import (
	"context"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/workload"
	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
	"github.com/credwatch/credwatch/pkg/lab/kubeadm"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// BenchmarkCAPIRoll measures one 1 → 2 → 1 control-plane roll by the real KubeadmControlPlane
// of v1.8.4 (cached binaries, https-readyz balancer) and the time of each phase from
// spec.rolloutAfter: the new machine created and joined, its etcd member added, the old member
// removed, the old machine out of rotation and deleted. The budget is 8 minutes.
// Run holding the lab lock: flock /tmp/credwatch-lab.lock go test -run '^$' -bench CAPIRoll -benchtime 1x ./pkg/lab/capilab/
func BenchmarkCAPIRoll(b *testing.B) {
	binDir := lab.DefaultBinDir()
	if _, err := capi.Find(binDir, capi.V184); err != nil {
		b.Skipf("%v", err)
	}
	if _, err := kubeadm.FindBinaries(binDir, ""); err != nil {
		b.Skipf("%v", err)
	}
	for i := 0; i < b.N; i++ {
		l := labtest.Start(b, lab.Options{Members: 1, Version: lab.OldVersion})
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		c, err := capilab.Start(ctx, l, capilab.Config{CAPI: capi.V184, Log: labtest.Log(b), Cluster: workload.Config{Name: "w1",
			LoadBalancer: infra.LoadBalancer{HealthCheck: lb.CheckHTTPSReadyz, Deregistration: infra.OnMachineDelete}}})
		if err != nil {
			cancel()
			b.Fatal(err)
		}
		if _, err := c.WaitControlPlane(ctx, 1); err != nil {
			cancel()
			b.Fatal(err)
		}
		r, err := c.Roll(ctx, capilab.RollOptions{})
		serr := c.Stop(context.WithoutCancel(ctx))
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		if serr != nil {
			b.Fatal(serr)
		}
		b.ReportMetric(r.Ended.Sub(r.Started).Seconds(), "roll-s")
		for _, m := range []struct{ what, unit string }{
			{capilab.PhaseMachineCreated, "created-s"}, {capilab.PhaseJoined, "joined-s"}, {capilab.PhaseMemberAdded, "member-added-s"},
			{capilab.PhaseMemberRemoved, "member-removed-s"}, {capilab.PhaseOutOfRotation, "out-of-rotation-s"}, {capilab.PhaseMachineDeleted, "deleted-s"},
		} {
			machine := r.After[0]
			if m.what == capilab.PhaseMemberRemoved || m.what == capilab.PhaseOutOfRotation || m.what == capilab.PhaseMachineDeleted {
				machine = r.Before[0]
			}
			if at := r.At(m.what, machine); !at.IsZero() {
				b.ReportMetric(at.Sub(r.Started).Seconds(), m.unit)
			}
		}
	}
}
