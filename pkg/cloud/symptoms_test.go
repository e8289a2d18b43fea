// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/liveness"
	"github.com/credwatch/credwatch/pkg/logs/cause"
)

func TestIsCloudErrorLine(t *testing.T) {
	cl := cause.NewClassifier(catalogue.Default())
	for line, want := range map[string]bool{
		`E1129 10:00:00.000000 1 vsphere.go:123] Cannot connect to vCenter with err: ServerFaultCode: Cannot complete login due to an incorrect user name or password.`: true,
		`E1129 10:00:00.000000 1 connection.go:60] vCenter vc1 failed. Err: "ServerFaultCode: Login failure"`:                                                           true,
		`I1129 10:00:00.000000 1 node_controller.go:229] error syncing 'w1': failed to get instance metadata for node w1: x, requeuing`:                                 true,
		`E1129 10:00:00.000000 1 node_lifecycle_controller.go:180] error checking if node w1 exists: Authentication failed`:                                             true,
		`I1129 10:00:00.000000 1 controllermanager.go:200] Started "replicaset"`:                                                                                        false,
	} {
		if got := isCloudErrorLine(cl, line); got != want {
			t.Errorf("isCloudErrorLine(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestDiscoverKubesprayNode: a static kube-controller-manager with the in-tree provider reads
// /etc/kubernetes/cloud_config from its node (hostPath); the same file given with --config gets
// the KCM and the kubelets as consumers, and the KCM, started before the file changed, is stale.
func TestDiscoverKubesprayNode(t *testing.T) {
	started := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	changed := started.Add(24 * time.Hour)
	kcm := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-controller-manager-cp1", Namespace: "kube-system",
			Annotations: map[string]string{"kubernetes.io/config.mirror": "x"}},
		Spec: corev1.PodSpec{NodeName: "cp1", Containers: []corev1.Container{{Name: "kube-controller-manager",
			Command:      []string{"kube-controller-manager", "--cloud-provider=vsphere", "--cloud-config=/etc/kubernetes/cloud_config"},
			VolumeMounts: []corev1.VolumeMount{{Name: "k8s", MountPath: "/etc/kubernetes", ReadOnly: true}}}},
			Volumes: []corev1.Volume{{Name: "k8s", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc/kubernetes"}}}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "kube-controller-manager",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}}}},
	}
	src := Source{Kind: SourceFile, Path: "/etc/kubernetes/cloud_config", Changed: &changed}
	cfg, err := Parse([]byte("[Global]\nuser = u\npassword = p\n[VirtualCenter \"vc1\"]\n"), src)
	if err != nil {
		t.Fatal(err)
	}
	inv := Discover(context.Background(), fake.NewClientset(kcm), DiscoverOptions{Local: []*Config{cfg}})
	if len(inv.Items) != 1 {
		t.Fatalf("items: %+v", inv.Items)
	}
	it := inv.Items[0]
	if len(it.Consumers) != 2 || it.Consumers[0].Component != KubeControllerManager || it.Consumers[1].Component != Kubelet {
		t.Fatalf("consumers: %+v", it.Consumers)
	}
	if !it.Consumers[0].Stale || it.Consumers[1].Stale {
		t.Fatalf("KCM should be stale, the kubelet unknown: %+v", it.Consumers)
	}
	it.decideAction()
	if want := "crictl stop $(crictl ps -q --name kube-controller-manager)"; !strings.Contains(it.Action, want) {
		t.Fatalf("action %q, want %q", it.Action, want)
	}
}

// TestJudgeSymptoms: Judge is a pure function of the observation; leases and nodes are judged only
// when the observation holds them (Fetch with Health), so check's own checks are not repeated.
func TestJudgeSymptoms(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ccm := Component{Kind: CloudControllerManager, Namespace: "kube-system", Pod: "ccm-x", Node: "cp-1", Restarts: 4, CrashLooping: true}
	obs := &Observation{Time: now,
		Inventory:   Inventory{Items: []Item{{Test: TestResult{Verdict: NotTested}}}},
		Controllers: []ControllerLog{{Component: ccm, Lines: []string{"E1129 vsphere.go:1] Cannot complete login due to an incorrect user name or password."}}},
		Leases:      []liveness.Status{{Name: "cloud-controller-manager", Found: true, Stale: true, RenewTime: now.Add(-time.Hour)}},
		Nodes:       &NodeTaints{Tainted: []string{"w1"}, Pending: []string{"default/web"}},
	}
	count := func(r *Report) map[string]int {
		n := map[string]int{}
		for _, f := range r.Findings {
			n[f.ID]++
		}
		return n
	}
	got := count(Judge(obs, ""))
	if got[IDControllers] != 2 || got[IDLoginFailed] != 1 || got[IDNodesUninit] != 1 {
		t.Errorf("with health: %v", got)
	}
	if obs.Items[0].Action != "" {
		t.Error("Judge changed the observation")
	}
	obs.Leases, obs.Nodes = nil, nil
	got = count(Judge(obs, ""))
	if got[IDControllers] != 1 || got[IDLoginFailed] != 1 || got[IDNodesUninit] != 0 {
		t.Errorf("without health: %v", got)
	}
}
