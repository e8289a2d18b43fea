// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package workload

import (
	"maps"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
)

func TestObjects(t *testing.T) {
	at := time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC)
	objs, err := Objects(Config{Name: "w1", RolloutAfter: at,
		LoadBalancer: infra.LoadBalancer{HealthCheck: lb.CheckTLS, Deregistration: infra.OnMachineDelete}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetKind()+"/"+o.GetName())
		if o.GetNamespace() != "default" || o.GetLabels()["cluster.x-k8s.io/cluster-name"] != "w1" {
			t.Errorf("%s: namespace %q labels %v", o.GetName(), o.GetNamespace(), o.GetLabels())
		}
	}
	if got := strings.Join(kinds, " "); got != "LabMachineTemplate/w1-control-plane KubeadmControlPlane/w1-control-plane LabCluster/w1 Cluster/w1" {
		t.Errorf("objects: %s", got)
	}
	kcp := objs[1].Object
	for _, f := range []struct {
		path []string
		want any
	}{
		{[]string{"spec", "version"}, "v1.30.14"},
		{[]string{"spec", "replicas"}, int64(1)},
		{[]string{"spec", "rolloutAfter"}, "2026-12-04T01:00:00Z"},
		{[]string{"spec", "rolloutStrategy", "rollingUpdate", "maxSurge"}, int64(1)},
		{[]string{"spec", "kubeadmConfigSpec", "joinConfiguration", "nodeRegistration", "imagePullPolicy"}, "Never"},
		{[]string{"spec", "kubeadmConfigSpec", "joinConfiguration", "nodeRegistration", "criSocket"}, "unix:///run/containerd/containerd.sock"},
		{[]string{"spec", "kubeadmConfigSpec", "initConfiguration", "nodeRegistration", "kubeletExtraArgs", "provider-id"}, "lab://{{ ds.meta_data.local_hostname }}"},
		{[]string{"spec", "kubeadmConfigSpec", "initConfiguration", "patches", "directory"}, "/etc/credwatch/kubeadm-patches"},
	} {
		got, _, err := unstructured.NestedFieldNoCopy(kcp, f.path...)
		if err != nil || got != f.want {
			t.Errorf("%s = %v (%v), want %v", strings.Join(f.path, "."), got, err, f.want)
		}
	}
	if _, ok := objs[1].GetAnnotations()["controlplane.cluster.x-k8s.io/skip-coredns"]; !ok {
		t.Errorf("KubeadmControlPlane annotations %v lack skip-coredns", objs[1].GetAnnotations())
	}
	if got, _, _ := unstructured.NestedString(objs[2].Object, "spec", "loadBalancer", "healthCheck"); got != "tls" {
		t.Errorf("LabCluster health check %q", got)
	}
	// Unstructured content must survive a deep copy (only JSON types).
	_ = objs[1].DeepCopy()
}

func TestObjectsRejects(t *testing.T) {
	for _, tc := range []struct {
		c      Config
		errSub string
	}{
		{Config{Name: "W1"}, "DNS label"},
		{Config{Name: "a-very-long-cluster-name"}, "16 characters"},
		{Config{Name: "w1", Replicas: 2}, "want 1, 3 or 5"},
		{Config{Name: "w1", MaxSurge: 2}, "max surge"},
	} {
		if _, err := Objects(tc.c); err == nil || !strings.Contains(err.Error(), tc.errSub) {
			t.Errorf("Objects(%+v) = %v, want %q", tc.c, err, tc.errSub)
		}
	}
}

// TestObjectsV1beta2 is the same cluster in Cluster API v1beta2 (v1.11 on, v1.14's lab):
// references by apiGroup, the machine template's infrastructureRef under spec, spec.rollout,
// and kubeadm extra arguments as {name, value} lists.
func TestObjectsV1beta2(t *testing.T) {
	at := time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC)
	objs, err := Objects(Config{Name: "w1", API: V1Beta2, Version: "v1.36.3", RolloutAfter: at,
		LoadBalancer: infra.LoadBalancer{HealthCheck: lb.CheckTCP, Deregistration: infra.OnMachineDelete}})
	if err != nil {
		t.Fatal(err)
	}
	kcp, cluster := objs[1], objs[3]
	if kcp.GetAPIVersion() != "controlplane.cluster.x-k8s.io/v1beta2" || cluster.GetAPIVersion() != "cluster.x-k8s.io/v1beta2" {
		t.Errorf("apiVersions %s, %s", kcp.GetAPIVersion(), cluster.GetAPIVersion())
	}
	for _, f := range []struct {
		obj  *unstructured.Unstructured
		path []string
		want any
	}{
		{kcp, []string{"spec", "version"}, "v1.36.3"},
		{kcp, []string{"spec", "rollout", "after"}, "2026-12-04T01:00:00Z"},
		{kcp, []string{"spec", "rollout", "strategy", "rollingUpdate", "maxSurge"}, int64(1)},
		{kcp, []string{"spec", "machineTemplate", "spec", "infrastructureRef", "apiGroup"}, infra.Group},
		{kcp, []string{"spec", "machineTemplate", "spec", "infrastructureRef", "kind"}, "LabMachineTemplate"},
		{cluster, []string{"spec", "controlPlaneRef", "apiGroup"}, "controlplane.cluster.x-k8s.io"},
		{cluster, []string{"spec", "infrastructureRef", "apiGroup"}, infra.Group},
	} {
		got, _, err := unstructured.NestedFieldNoCopy(f.obj.Object, f.path...)
		if err != nil || got != f.want {
			t.Errorf("%s %s = %v (%v), want %v", f.obj.GetKind(), strings.Join(f.path, "."), got, err, f.want)
		}
	}
	for _, p := range [][]string{{"spec", "rolloutAfter"}, {"spec", "rolloutStrategy"}, {"spec", "machineTemplate", "infrastructureRef"}} {
		if _, found, _ := unstructured.NestedFieldNoCopy(kcp.Object, p...); found {
			t.Errorf("v1beta2 KubeadmControlPlane has the v1beta1 field %s", strings.Join(p, "."))
		}
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(cluster.Object, "spec", "controlPlaneRef", "apiVersion"); found {
		t.Error("v1beta2 Cluster's controlPlaneRef has an apiVersion")
	}
	args, _, _ := unstructured.NestedSlice(kcp.Object, "spec", "kubeadmConfigSpec", "initConfiguration", "nodeRegistration", "kubeletExtraArgs")
	if len(args) != 1 || args[0].(map[string]any)["name"] != "provider-id" || args[0].(map[string]any)["value"] != "lab://{{ ds.meta_data.local_hostname }}" {
		t.Errorf("kubeletExtraArgs %v", args)
	}
	cm, _, _ := unstructured.NestedSlice(kcp.Object, "spec", "kubeadmConfigSpec", "clusterConfiguration", "controllerManager", "extraArgs")
	if len(cm) != 1 || cm[0].(map[string]any)["name"] != "flex-volume-plugin-dir" {
		t.Errorf("controllerManager extraArgs %v", cm)
	}
	_ = kcp.DeepCopy()
	if _, err := Objects(Config{Name: "w1", API: "v1alpha4"}); err == nil || !strings.Contains(err.Error(), `"v1alpha4"`) {
		t.Errorf("Objects(API v1alpha4) = %v", err)
	}
}

// TestObjectsWorkers: a MachineDeployment of workers joins with the control plane's kubeadm
// settings, in each API version's reference shape.
func TestObjectsWorkers(t *testing.T) {
	for _, api := range []string{V1Beta1, V1Beta2} {
		objs, err := Objects(Config{Name: "w1", API: api, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, o := range objs[4:] {
			kinds = append(kinds, o.GetKind()+"/"+o.GetName())
		}
		if got := strings.Join(kinds, " "); got != "LabMachineTemplate/w1-md-0 KubeadmConfigTemplate/w1-md-0 MachineDeployment/w1-md-0" {
			t.Fatalf("%s worker objects: %s", api, got)
		}
		md := objs[6].Object
		if got, _, _ := unstructured.NestedInt64(md, "spec", "replicas"); got != 1 {
			t.Errorf("%s replicas %d", api, got)
		}
		ref, _, _ := unstructured.NestedStringMap(md, "spec", "template", "spec", "bootstrap", "configRef")
		want := map[string]string{"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate", "name": "w1-md-0"}
		if api == V1Beta2 {
			want = map[string]string{"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfigTemplate", "name": "w1-md-0"}
		}
		if !maps.Equal(ref, want) {
			t.Errorf("%s configRef %v, want %v", api, ref, want)
		}
		if got, _, _ := unstructured.NestedString(objs[5].Object, "spec", "template", "spec", "joinConfiguration", "nodeRegistration", "criSocket"); got != "unix:///run/containerd/containerd.sock" {
			t.Errorf("%s worker criSocket %q", api, got)
		}
		if objs[5].GetAPIVersion() != "bootstrap.cluster.x-k8s.io/"+api {
			t.Errorf("KubeadmConfigTemplate apiVersion %s", objs[5].GetAPIVersion())
		}
	}
	if _, err := Objects(Config{Name: "w1", Workers: 4}); err == nil {
		t.Error("4 workers accepted")
	}
}
