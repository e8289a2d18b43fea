// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/cloud/cloudtest"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/liveness"
)

// TestIntegrationLabCloud runs `credwatch cloud` against a real kube-apiserver and
// kube-controller-manager (the lab) holding the objects a vSphere CPI + CSI install has, with
// vcsim as the vCenter:
//   - the CPI's Secret still has the old password after a rotation: rejected, naming the Secret,
//     and the CCM re-reads it (no restart);
//   - the CSI Secret was updated after its controller started: the controller is stale (restart);
//   - an OpenStack config names a Secret that does not exist: cloud-config-invalid;
//   - a node keeps the uninitialized taint with a Pod Pending behind it: nodes-uninitialized;
//   - kube-controller-manager is stopped: its lease goes stale, a new Deployment gets no ReplicaSet,
//     and the report says controllers-not-running.
//
// Run it holding the lab lock: flock /tmp/credwatch-lab.lock go test -run TestIntegrationLab ./internal/cmd/cloud
func TestIntegrationLabCloud(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 1, WithControllerManager: true})
	sim := cloudtest.StartVCSim(t, "cpi@vsphere.local", "Old-pass1")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(l.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	ks := "kube-system"
	// The ServiceAccount admission plugin wants each namespace's "default" ServiceAccount; do not
	// wait for kube-controller-manager to create them.
	for _, ns := range []string{ks, "default"} {
		_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("service account %s/default: %v", ns, err)
		}
	}
	vsConf := fmt.Sprintf("[Global]\nsecret-name = \"vsphere-cloud-secret\"\nsecret-namespace = \"kube-system\"\nport = \"%s\"\ninsecure-flag = \"1\"\n\n[VirtualCenter %q]\ndatacenters = \"DC0\"\n",
		sim.Port, sim.Host)
	_, err = cs.CoreV1().ConfigMaps(ks).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "vsphere-cloud-config"},
		Data: map[string]string{"vsphere.conf": vsConf}}, metav1.CreateOptions{})
	must("configmap", err)
	_, err = cs.CoreV1().Secrets(ks).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vsphere-cloud-secret"},
		StringData: map[string]string{sim.Host + ".username": "cpi@vsphere.local", sim.Host + ".password": "Old-pass1"}}, metav1.CreateOptions{})
	must("cpi secret", err)
	csiConf := func(p string) string {
		return fmt.Sprintf("[Global]\ncluster-id = \"lab\"\n\n[VirtualCenter %q]\ninsecure-flag = \"true\"\nuser = \"cpi@vsphere.local\"\npassword = %q\nport = \"%s\"\ndatacenters = \"DC0\"\n",
			sim.Host, p, sim.Port)
	}
	_, err = cs.CoreV1().Secrets(ks).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vsphere-config-secret"},
		StringData: map[string]string{"csi-vsphere.conf": csiConf("Old-pass1")}}, metav1.CreateOptions{})
	must("csi secret", err)
	_, err = cs.CoreV1().ConfigMaps(ks).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cloud-config"},
		Data: map[string]string{"cloud.conf": "[Global]\nauth-url = http://127.0.0.1:1/v3\nsecret-name = openstack-creds\nsecret-namespace = kube-system\n"}}, metav1.CreateOptions{})
	must("openstack configmap", err)

	started := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	runningPod(ctx, t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "vsphere-cloud-controller-manager-x1", Namespace: ks},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "vsphere-cloud-controller-manager", Image: "registry.invalid/cpi",
			Args:         []string{"--cloud-provider=vsphere", "--cloud-config=/etc/cloud/vsphere.conf"},
			VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/cloud"}}}},
			Volumes: []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "vsphere-cloud-config"}}}}}}}, started)
	runningPod(ctx, t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "vsphere-csi-controller-x2", Namespace: ks},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "vsphere-csi-controller", Image: "registry.invalid/csi",
			VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/cloud"}}}},
			Volumes: []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vsphere-config-secret"}}}}}}, started)

	// A node the cloud provider never initialized, and a Pod Pending behind its taint.
	_, err = cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-new"},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: corev1.TaintEffectNoSchedule}}}}, metav1.CreateOptions{})
	must("node", err)
	p, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/web"}}}}, metav1.CreateOptions{})
	must("pending pod", err)
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/1 nodes are available: 1 node(s) had untolerated taint {node.cloudprovider.kubernetes.io/uninitialized: true}."}}
	_, err = cs.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
	must("pending pod status", err)

	// The rotation: vCenter's password changes; the admin updates the CSI Secret but not the CPI one.
	sim.SetPassword("New-pass2")
	// managedFields times have one-second resolution: make the CSI update visibly newer, so it is
	// tested first (newest copies first) and the CPI Secret's rejection does not block it.
	time.Sleep(1100 * time.Millisecond)
	sec, err := cs.CoreV1().Secrets(ks).Get(ctx, "vsphere-config-secret", metav1.GetOptions{})
	must("get csi secret", err)
	sec.Data["csi-vsphere.conf"] = []byte(csiConf("New-pass2"))
	_, err = cs.CoreV1().Secrets(ks).Update(ctx, sec, metav1.UpdateOptions{})
	must("update csi secret", err)

	// kube-controller-manager holds its lease, then stops.
	waitLease(ctx, t, cs, false)
	must("stop kcm", l.StopControllerManager(ctx))
	_, err = cs.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "after-stop"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "after-stop"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "after-stop"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none"}}}}}}, metav1.CreateOptions{})
	must("deployment", err)
	waitLease(ctx, t, cs, true)
	rs, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=after-stop"})
	must("list replicasets", err)
	if len(rs.Items) != 0 {
		t.Fatalf("a ReplicaSet appeared without kube-controller-manager: %v", rs.Items[0].Name)
	}

	r := run(t, "--kubeconfig", l.AdminKubeconfig(), "-o", "json", "--login-interval", "10ms")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, id := range []string{"cloud-credential-rejected", "cloud-consumer-stale", "cloud-config-invalid", "nodes-uninitialized", "controllers-not-running"} {
		if !r.has(id) {
			t.Errorf("no %s finding:\n%s", id, r.stdout)
		}
	}
	var sawCPI, sawCSI bool
	for _, c := range r.report.Credentials {
		switch {
		case c.Source.Kind == "secret" && c.Source.Name == "vsphere-cloud-secret":
			sawCPI = true
			if c.Test.Verdict != "rejected" || c.Test.Fault != "InvalidLogin" || len(c.Consumers) != 1 || !c.Consumers[0].Rereads ||
				!strings.Contains(c.Action, "no restart") {
				t.Errorf("CPI credential: %+v", c)
			}
		case c.Source.Kind == "secret" && c.Source.Name == "vsphere-config-secret":
			sawCSI = true
			if c.Test.Verdict != "valid" || len(c.Consumers) != 1 || !c.Consumers[0].Stale || !strings.Contains(c.Action, "restart") {
				t.Errorf("CSI credential: %+v", c)
			}
		}
	}
	if !sawCPI || !sawCSI {
		t.Errorf("credentials missing (CPI %v, CSI %v):\n%s", sawCPI, sawCSI, r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "Old-pass1") || strings.Contains(r.stdout+r.stderr, "New-pass2") {
		t.Error("a password was printed")
	}
	t.Logf("table:\n%s", run(t, "--kubeconfig", l.AdminKubeconfig(), "--no-login").stdout)
}

// runningPod creates pod and marks it Running since started (there is no kubelet in the lab).
func runningPod(ctx context.Context, t *testing.T, cs kubernetes.Interface, pod *corev1.Pod, started metav1.Time) {
	t.Helper()
	p, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.StartTime = &started
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}})
	}
	if _, err := cs.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("pod %s status: %v", pod.Name, err)
	}
}

// waitLease waits until kube-controller-manager's lease is fresh (stale=false) or stale (true).
func waitLease(ctx context.Context, t *testing.T, cs kubernetes.Interface, stale bool) {
	t.Helper()
	for {
		st, err := liveness.LeaseStatus(ctx, cs, "kube-controller-manager", time.Now())
		if err == nil && st.Found && st.Stale == stale {
			t.Logf("lease kube-controller-manager: holder %s, renewed %s ago, duration %s, stale %v", st.Holder, st.Age.Round(time.Second), st.Duration, st.Stale)
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("lease kube-controller-manager never became stale=%v (last %+v, %v)", stale, st, err)
		case <-time.After(time.Second):
		}
	}
}
