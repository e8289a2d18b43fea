// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/workload"
	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
	"github.com/credwatch/credwatch/pkg/lab/kubeadm"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// TestIntegrationCAPIControlPlane brings up the Cluster API lab with v1.8.1's managers on a
// v1.30.14 management lab, and v1.14.2's (v1beta2) on a v1.36.3 one, each with a workload
// cluster of one control-plane machine: the real KubeadmControlPlane controller asks for a
// Machine, the provider makes a LabMachine's kubeadm host, the bootstrap runs kubeadm init, and
// the workload apiserver answers through the LabCluster's balancer with the kubeconfig Cluster
// API wrote.
func TestIntegrationCAPIControlPlane(t *testing.T) {
	for _, v := range []string{capi.V181, capi.V1142} {
		t.Run(v, func(t *testing.T) { controlPlane(t, v) })
	}
}

func controlPlane(t *testing.T, version string) {
	c, ctx, t0 := startCAPILab(t, version, infra.LoadBalancer{HealthCheck: lb.CheckTCP, Deregistration: infra.OnMachineDelete, IntervalSeconds: 2, UnhealthyThreshold: 2})
	cp, err := c.WaitControlPlane(ctx, 1)
	for _, e := range c.Events() {
		t.Logf("timeline: %s", e)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FIGURE first control-plane machine Running %s after start: %s", time.Since(t0).Round(time.Millisecond), cp)
	kc, err := c.WorkloadKubeconfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("workload cluster through %s: %v", rc.Host, err)
	}
	if len(nodes.Items) != 1 || nodes.Items[0].Spec.ProviderID != infra.ProviderID(cp.Machines[0].Node) {
		t.Errorf("workload nodes %d, want 1 with providerID lab://%s", len(nodes.Items), cp.Machines[0].Node)
	}
}

// startCAPILab skips without the binaries, starts a management lab on version's line and the Cluster API
// lab of version with one control-plane machine behind a balancer configured as b, and stops it
// when the test ends. The context bounds the whole test.
func startCAPILab(t *testing.T, version string, b infra.LoadBalancer) (*capilab.Lab, context.Context, time.Time) {
	t.Helper()
	return startCAPILabWith(t, version, workload.Config{Name: "w1", LoadBalancer: b})
}

// startCAPILabWith is startCAPILab with the workload cluster's configuration (replicas, …).
func startCAPILabWith(t *testing.T, version string, wc workload.Config) (*capilab.Lab, context.Context, time.Time) {
	t.Helper()
	if testing.Short() {
		t.Skip("lab test: skipped under -short")
	}
	labtest.CAPIAll(t)
	binDir := lab.DefaultBinDir()
	if _, err := capi.Find(binDir, version); err != nil {
		t.Skipf("%v", err)
	}
	line := capi.LineOf(version)
	if _, err := kubeadm.FindBinaries(binDir, line.Kubernetes); err != nil {
		t.Skipf("%v", err)
	}
	l := labtest.Start(t, lab.Options{Members: 1, Version: line.Kubernetes})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	t.Cleanup(cancel)
	t0 := time.Now()
	c, err := capilab.Start(ctx, l, capilab.Config{CAPI: version, Log: labtest.Log(t), Cluster: wc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer scancel()
		if err := c.Stop(sctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	t.Logf("FIGURE capi lab started (managers, provider, objects) in %s", time.Since(t0).Round(time.Millisecond))
	return c, ctx, t0
}
