// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDecideAction(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	before, after := t0.Add(-time.Hour), t0.Add(time.Hour)
	file := Source{Kind: SourceFile, Path: "/etc/kubernetes/cloud_config", Changed: &t0}
	secret := Source{Kind: SourceSecret, Namespace: "kube-system", Name: "vsphere-cloud-secret", Changed: &t0}
	kcm := Consumer{Component: KubeControllerManager, Pod: "kube-system/kcm-1", Restart: "crictl stop ...", Started: &before}
	kcmNew := kcm
	kcmNew.Started = &after
	justBefore := t0.Add(-500 * time.Millisecond)
	hostJust := Consumer{Component: KubeAPIServer, PID: 7, Restart: "systemctl restart kube-apiserver", Started: &justBefore}
	hostOld := hostJust
	hostOld.Started = &before
	looping := Consumer{Component: Kubelet, Node: "node-2", PID: 42, Started: &after, Looping: true, Restarts: 7}
	ccm := Consumer{Component: CloudControllerManager, Pod: "kube-system/ccm", Rereads: true, Restart: "kubectl rollout restart", Started: &before}
	for _, tc := range []struct {
		name      string
		src       Source
		cons      []Consumer
		verdict   Verdict
		wantStale bool
		want      string
	}{
		{"file changed after start", file, []Consumer{kcm}, Valid, true, "restart: crictl stop"},
		{"file changed before start", file, []Consumer{kcmNew}, Valid, false, "nothing to do"},
		{"rejected, file", file, []Consumer{kcmNew}, Rejected, false, "update file /etc/kubernetes/cloud_config with the new password, then restart: crictl stop"},
		{"rejected, secret re-read", secret, []Consumer{ccm}, Rejected, false, "re-read it on the next failed login (no restart)"},
		{"secret re-read is never stale", secret, []Consumer{ccm}, Valid, false, "nothing to do"},
		{"rejected, no consumer seen", file, nil, Rejected, false, "then restart whatever reads it"},
		{"rejected, a looping kubelet", file, []Consumer{looping}, Rejected, false,
			"update file /etc/kubernetes/cloud_config with the new password; the kubelet of node node-2 restarts by itself every ~10 s (crash loop)"},
		{"host process read within /proc's second of the change", file, []Consumer{hostJust}, Valid, false, "nothing to do"},
		{"host process started well before the change", file, []Consumer{hostOld}, Valid, true, "restart: systemctl restart kube-apiserver"},
		{"valid, a looping kubelet: not this credential", file, []Consumer{looping}, Valid, false, "nothing to do"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it := Item{Credential: Credential{Source: tc.src}, Consumers: append([]Consumer(nil), tc.cons...), Test: TestResult{Verdict: tc.verdict}}
			it.judgeStaleness()
			it.decideAction()
			if len(it.Consumers) > 0 && it.Consumers[0].Stale != tc.wantStale {
				t.Errorf("stale = %v, want %v", it.Consumers[0].Stale, tc.wantStale)
			}
			if !strings.Contains(it.Action, tc.want) {
				t.Errorf("action %q, want it to contain %q", it.Action, tc.want)
			}
		})
	}
}

func TestMountSource(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kcm"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-controller-manager", VolumeMounts: []corev1.VolumeMount{
			{Name: "k8s", MountPath: "/etc/kubernetes"},
			{Name: "cm", MountPath: "/etc/cloud/"},
			{Name: "sec", MountPath: "/etc/secret"},
		}}}, Volumes: []corev1.Volume{
			{Name: "k8s", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc/kubernetes"}}},
			{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"},
				Items: []corev1.KeyToPath{{Key: "vsphere.conf", Path: "conf"}}}}},
			{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
		}}}
	for in, want := range map[string]string{
		"/etc/kubernetes/cloud_config": "node-file /etc/kubernetes/cloud_config",
		"/etc/cloud/conf":              "configmap kube-system/cfg key vsphere.conf",
		"/etc/secret/cloud.conf":       "secret kube-system/s key cloud.conf",
		"/opt/other":                   "",
	} {
		src, ok := mountSource(pod, "kube-controller-manager", in)
		if got := src.String(); ok != (want != "") || ok && got != want {
			t.Errorf("mountSource(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestComponentRestartCommand(t *testing.T) {
	for _, tc := range []struct {
		c    Component
		want string
	}{
		{Component{Kind: KubeControllerManager, Owner: "static", Node: "cp-1", container: "kube-controller-manager"}, "crictl stop $(crictl ps -q --name kube-controller-manager)   # on node cp-1"},
		{Component{Kind: CloudControllerManager, Namespace: "kube-system", Owner: "deployment/ccm"}, "kubectl -n kube-system rollout restart deployment/ccm"},
		{Component{Kind: CSIController, Namespace: "ns", Pod: "p"}, "kubectl -n ns delete pod p"},
		{Component{Kind: Kubelet}, "systemctl restart kubelet"},
	} {
		if got := tc.c.RestartCommand(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%+v: %q, want prefix %q", tc.c, got, tc.want)
		}
	}
}
