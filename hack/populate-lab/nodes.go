// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func nodeName(i int) string { return fmt.Sprintf("pop-node-%d", i) }

// nodeImages are the images a worker node of a busy cluster reports in status.images; kubelets
// report up to 50, and they are most of a Node object's size.
var nodeImages = func() []corev1.ContainerImage {
	var out []corev1.ContainerImage
	for i := range 40 {
		repo := fmt.Sprintf("registry.example.com/team-%d/service-%d", i%7, i)
		out = append(out, corev1.ContainerImage{SizeBytes: int64(20_000_000 + i*3_100_000), Names: []string{
			fmt.Sprintf("%s@sha256:%064x", repo, i*7919+1), fmt.Sprintf("%s:v1.%d.%d", repo, i%13, i%5)}})
	}
	return out
}()

// newNode is worker node i as its kubelet registers it: labels, taint-free spec and pod CIDR.
func newNode(i int) *corev1.Node {
	zone := fmt.Sprintf("zone-%c", 'a'+i%3)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName(i), Labels: map[string]string{
			"kubernetes.io/hostname": nodeName(i), "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
			"node.kubernetes.io/instance-type": "m5.2xlarge", "topology.kubernetes.io/region": "region-1",
			"topology.kubernetes.io/zone": zone, "node-role.kubernetes.io/worker": "",
		}, Annotations: map[string]string{
			"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true",
		}},
		Spec: corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256),
			PodCIDRs: []string{fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256)}, ProviderID: "external://" + nodeName(i)},
	}
}

// nodeStatus is a Ready node's status as its kubelet posts it.
func nodeStatus(n *corev1.Node, i int, now time.Time) {
	t := metav1.NewTime(now)
	cond := func(typ corev1.NodeConditionType, st corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: typ, Status: st, LastHeartbeatTime: t, LastTransitionTime: t, Reason: reason, Message: msg}
	}
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi")}
	n.Status = corev1.NodeStatus{
		Capacity: res, Allocatable: res,
		Phase: corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
		},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: nodeIP(i)},
			{Type: corev1.NodeHostName, Address: nodeName(i)}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
		NodeInfo: corev1.NodeSystemInfo{MachineID: fmt.Sprintf("%032x", i), SystemUUID: fmt.Sprintf("%08x-0000-0000-0000-%012x", i, i),
			BootID: fmt.Sprintf("%08x-1111-2222-3333-%012x", i, i), KernelVersion: "6.1.0-28-amd64",
			OSImage: "Debian GNU/Linux 12 (bookworm)", ContainerRuntimeVersion: "containerd://1.7.24",
			KubeletVersion: "v1.36.3", OperatingSystem: "linux", Architecture: "amd64"},
		Images: nodeImages,
	}
}

func nodeIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", 32+i/65536, i/256%256, i%256) }

// podRunning is the status the kubelet of node posts for a running pod with one container.
func podRunning(p *corev1.Pod, node, i int, now time.Time) {
	t := metav1.NewTime(now)
	cond := func(typ corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: t}
	}
	ip := fmt.Sprintf("10.%d.%d.%d", 64+node/256, node%256, 2+i%250)
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, HostIP: nodeIP(node), HostIPs: []corev1.HostIP{{IP: nodeIP(node)}},
		PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, StartTime: &t, QOSClass: corev1.PodQOSBestEffort,
		Conditions: []corev1.PodCondition{cond(corev1.PodReadyToStartContainers), cond(corev1.PodInitialized),
			cond(corev1.PodReady), cond(corev1.ContainersReady), cond(corev1.PodScheduled)},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, Started: new(true),
			Image: "registry.k8s.io/pause:3.10", ImageID: "registry.k8s.io/pause@sha256:" + fmt.Sprintf("%064x", 1),
			ContainerID: fmt.Sprintf("containerd://%064x", i),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}}}},
	}
}
