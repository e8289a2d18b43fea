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

// TestIntegrationCAPISelfManaged makes a workload cluster of one control-plane machine and one
// worker manage itself (v1.14.2's managers installed in it as Deployments on the worker, the
// real clusterctl move, the management lab's managers stopped), then rolls its control plane:
// the KubeadmControlPlane controller that replaces the machine runs in the cluster it rolls.
func TestIntegrationCAPISelfManaged(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: skipped under -short")
	}
	labtest.CAPIAll(t)
	version := capi.V1142
	binDir := lab.DefaultBinDir()
	if _, err := capi.Find(binDir, version); err != nil {
		t.Skipf("%v", err)
	}
	line := capi.LineOf(version)
	if _, err := kubeadm.FindBinaries(binDir, line.Kubernetes); err != nil {
		t.Skipf("%v", err)
	}
	c, ctx, t0 := startSelfManaged(t, version, workload.Config{Name: "w1", Workers: 1,
		LoadBalancer: infra.LoadBalancer{HealthCheck: lb.CheckTCP, Deregistration: infra.OnMachineDelete}})
	if _, err := c.WaitControlPlane(ctx, 1); err != nil {
		t.Fatal(err)
	}
	t.Logf("FIGURE control plane ready %s after start", time.Since(t0).Round(time.Second))
	mv, err := c.Move(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FIGURE moved: managers on %s, install %s, clusterctl move %s, %d Machines in the workload cluster",
		mv.Node, mv.Install.Round(time.Second), mv.Move.Round(time.Second), mv.Objects)
	if mv.Objects < 2 {
		t.Errorf("%d Machines in the workload cluster after the move, want the control plane's and the worker's", mv.Objects)
	}
	r, err := c.Roll(ctx, capilab.RollOptions{OnPhase: func(p capilab.Phase) { t.Logf("phase %s %s", p.What, p.Machine) }})
	for _, e := range c.Events() {
		t.Logf("timeline: %s", e)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FIGURE self-managed roll %s, %d failed drains (%s)", r.Duration, r.DrainErrors, r.DrainError)
}

func startSelfManaged(t *testing.T, version string, wc workload.Config) (*capilab.Lab, context.Context, time.Time) {
	t.Helper()
	l := labtest.Start(t, lab.Options{Members: 1, Version: capi.LineOf(version).Kubernetes})
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	t.Cleanup(cancel)
	t0 := time.Now()
	c, err := capilab.Start(ctx, l, capilab.Config{CAPI: version, Log: labtest.Log(t), Cluster: wc, SelfManaged: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer scancel()
		if err := c.Stop(sctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return c, ctx, t0
}
