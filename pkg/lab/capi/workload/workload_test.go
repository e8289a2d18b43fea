// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package workload

import (
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
