// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package infra_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// TestIntegrationCRDs installs the provider's CRDs in a real kube-apiserver of the line Cluster
// API v1.8 supports (v1.30) and round-trips a LabCluster whose balancer is the first report's.
func TestIntegrationCRDs(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 1, Version: lab.OldVersion, Network: lab.NetworkLoopback})
	ctx := context.Background()
	dc, err := dynamic.NewForConfig(l.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := infra.InstallCRDs(ctx, dc); err != nil {
		t.Fatal(err)
	}
	if err := infra.InstallCRDs(ctx, dc); err != nil { // a second install updates in place
		t.Fatalf("second install: %v", err)
	}
	spec := infra.LabClusterSpec{
		ControlPlaneEndpoint: infra.APIEndpoint{Host: "10.200.7.1", Port: 7443},
		LoadBalancer:         infra.LoadBalancer{HealthCheck: lb.CheckTLS, Deregistration: infra.OnMachineDelete},
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": infra.Group + "/" + infra.Version, "kind": "LabCluster",
		"metadata": map[string]any{"name": "work", "namespace": "default"}, "spec": obj}}
	if _, err := dc.Resource(infra.LabClusters).Namespace("default").Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := dc.Resource(infra.LabClusters).Namespace("default").Get(ctx, "work", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var back infra.LabClusterSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object["spec"].(map[string]any), &back); err != nil {
		t.Fatal(err)
	}
	if back != spec {
		t.Errorf("spec read back %+v, want %+v", back, spec)
	}
}
