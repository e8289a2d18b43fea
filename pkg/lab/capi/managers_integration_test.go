// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capi_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// TestIntegrationCAPIManagers brings up a 1-member v1.30.14 lab (Cluster API v1.8's management
// line) and, one release after the other, starts v1.8.1's and then v1.8.4's three managers against
// it with their webhooks served from a lab-CA certificate on the lab network, and shows each
// manager's webhook answering the apiserver: the bootstrap manager defaults a KubeadmConfig's
// format, the core manager creates a Cluster and refuses one with a topology (the ClusterTopology
// gate is off), the control-plane manager adds the v prefix to a KubeadmControlPlane's version.
// Stopping a release removes its webhook configurations and its processes.
func TestIntegrationCAPIManagers(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts a lab and Cluster API (skipped under -short)")
	}
	labtest.CAPIAll(t)
	// `make capi-binaries` is not part of `make test` (11 min cold); `make test-capi` runs it and
	// this test. Without its output the test skips, naming the target.
	for _, v := range capi.Versions() {
		if _, err := capi.Find(lab.DefaultBinDir(), v); err != nil {
			t.Skipf("%v", err)
		}
	}
	l := labtest.Start(t, lab.Options{Members: 1, Version: lab.OldVersion})
	dyn, err := dynamic.NewForConfig(l.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range capi.Versions() {
		t.Run(v, func(t *testing.T) { testManagers(t, l, dyn, v) })
	}
}

func testManagers(t *testing.T, l *lab.Lab, dyn dynamic.Interface, version string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	m, err := capi.Start(ctx, l, capi.Options{Version: version, Log: labtest.Log(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("capi %s managers ready and webhooks registered in %s", version, time.Since(start).Round(time.Millisecond))
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = m.Stop(context.Background())
		}
	})
	// clusterctl's inventory names the release, as clusterctl init leaves it.
	providers := dyn.Resource(schema.GroupVersionResource{Group: "clusterctl.cluster.x-k8s.io", Version: "v1alpha3", Resource: "providers"})
	for _, p := range []struct{ ns, name string }{{"capi-system", "cluster-api"}, {"capi-kubeadm-control-plane-system", "control-plane-kubeadm"}} {
		got, err := providers.Namespace(p.ns).Get(ctx, p.name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("clusterctl inventory: %v", err)
		}
		if v, _, _ := unstructured.NestedString(got.Object, "version"); v != version {
			t.Errorf("clusterctl inventory %s/%s: version %q, want %q", p.ns, p.name, v, version)
		}
	}
	ns := "default"
	name := "lab-" + strings.NewReplacer("v", "", ".", "").Replace(version) // lab-181
	kubeadmConfigs := dyn.Resource(schema.GroupVersionResource{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Resource: "kubeadmconfigs"}).Namespace(ns)
	clusters := dyn.Resource(schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "clusters"}).Namespace(ns)
	kcps := dyn.Resource(schema.GroupVersionResource{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1", Resource: "kubeadmcontrolplanes"}).Namespace(ns)

	// The apiserver picks new webhook configurations up from its informer: the first object
	// may go through before it has. A dry run of a KubeadmConfig shows when the bootstrap
	// manager's webhook is called: v1.8 defaults its format; v1.14 has no defaulting webhook for
	// KubeadmConfig (only KubeadmConfigTemplate's) and shows its validating one instead, which
	// refuses format ignition without the KubeadmBootstrapFormatIgnition gate
	// (bootstrap/kubeadm/webhooks/admission/kubeadmconfig.go:243 at v1.14.2).
	if capi.LineOf(version).API == "v1beta2" {
		const refused = "can be set only if the KubeadmBootstrapFormatIgnition feature gate is enabled"
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			_, err := kubeadmConfigs.Create(ctx, obj("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfig", name, map[string]any{"format": "ignition"}),
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil && strings.Contains(err.Error(), refused) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("KubeadmConfig with format ignition: %v, want the bootstrap manager's webhook to refuse it (%q) within 30 s", err, refused)
			}
		}
	} else {
		var format string
		deadline := time.Now().Add(30 * time.Second)
		for format == "" {
			got, err := kubeadmConfigs.Create(ctx, obj("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfig", name, map[string]any{}), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				t.Fatalf("dry-run create a KubeadmConfig: %v", err)
			}
			format, _, _ = unstructured.NestedString(got.Object, "spec", "format")
			if format == "" && time.Now().After(deadline) {
				t.Fatalf("KubeadmConfig spec.format not defaulted within 30 s: the bootstrap manager's webhook is not called")
			}
			if format == "" {
				time.Sleep(200 * time.Millisecond)
			}
		}
		if format != "cloud-config" {
			t.Errorf("KubeadmConfig spec.format defaulted to %q, want cloud-config", format)
		}
	}

	// v1.14 refuses a Cluster with none of controlPlaneRef, infrastructureRef and topology.
	if _, err := clusters.Create(ctx, obj("cluster.x-k8s.io/v1beta1", "Cluster", name, map[string]any{"controlPlaneRef": map[string]any{
		"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane", "name": name}}), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a Cluster: %v", err)
	}
	_, err = clusters.Create(ctx, obj("cluster.x-k8s.io/v1beta1", "Cluster", name+"-topology", map[string]any{
		"topology": map[string]any{"class": "lab", "version": "v1.30.14"},
	}), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), `admission webhook "validation.cluster.cluster.x-k8s.io" denied the request`) ||
		!strings.Contains(err.Error(), "ClusterTopology feature flag") {
		t.Errorf("create a Cluster with a topology: %v, want the core manager's webhook to deny it (ClusterTopology)", err)
	}

	if capi.LineOf(version).API == "v1beta2" {
		// Converting a v1beta1 KubeadmControlPlane resolves its infrastructureRef's kind to an
		// apiGroup through that kind's CRD, as on any management cluster that has its provider.
		if err := infra.InstallCRDs(ctx, dyn); err != nil {
			t.Fatal(err)
		}
	}
	got, err := kcps.Create(ctx, obj("controlplane.cluster.x-k8s.io/v1beta1", "KubeadmControlPlane", name, map[string]any{
		"version": "1.30.14",
		"machineTemplate": map[string]any{"infrastructureRef": map[string]any{
			"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "LabMachineTemplate", "name": name,
		}},
		"kubeadmConfigSpec": map[string]any{},
	}), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("dry-run create a KubeadmControlPlane: %v", err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "spec", "version"); v != "v1.30.14" {
		t.Errorf("KubeadmControlPlane spec.version %q, want the control-plane manager's webhook to make it v1.30.14", v)
	}
	for i, r := range m.Running() {
		if !r {
			t.Errorf("%s exited", m.Release.Managers[i].Name)
		}
	}
	// The managers log the version stamped by hack/labbin/lib.sh at start.
	for _, f := range m.LogFiles() {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "Starting manager") || !strings.Contains(string(data), version) {
			t.Errorf("%s: no \"Starting manager\" line with %s", f, version)
		}
	}

	if err := m.Stop(ctx); err != nil {
		t.Fatalf("stop the managers: %v", err)
	}
	stopped = true
	for i, r := range m.Running() {
		if r {
			t.Errorf("%s still running after Stop", m.Release.Managers[i].Name)
		}
	}
	for _, res := range []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"} {
		list, err := dyn.Resource(schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: res}).
			List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=credwatch-lab"})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 0 {
			t.Errorf("%d %s left after Stop", len(list.Items), res)
		}
	}
}

func obj(apiVersion, kind, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     spec,
	}}
}
