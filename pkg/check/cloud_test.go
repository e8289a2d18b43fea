// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/liveness"
	"github.com/credwatch/credwatch/pkg/report"
)

const cpiConfig = `global:
  port: 443
  secretName: vsphere-cloud-secret
  secretNamespace: kube-system
vcenter:
  main:
    server: 10.0.0.1
    datacenters:
      - DC1
`

const cpiPassword = "s3cret-cpi-pass"

// vsphereCluster is a cluster running the vSphere CPI after a password rotation: its config
// (ConfigMap) names its Secret, the CCM crash-loops, its lease is stale and a node is left
// uninitialized with a Pod Pending behind it.
func vsphereCluster() []runtime.Object {
	ks := "kube-system"
	started := metav1.NewTime(now.Add(-48 * time.Hour))
	changed := metav1.NewTime(now.Add(-2 * time.Hour))
	renew := metav1.NewMicroTime(now.Add(-20 * time.Minute))
	holder, dur := "ccm-1", int32(15)
	return []runtime.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ks, Name: "vsphere-cloud-config", CreationTimestamp: started},
			Data: map[string]string{"vsphere.conf": cpiConfig}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ks, Name: "vsphere-cloud-secret", CreationTimestamp: started,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, Time: &changed}}},
			Data: map[string][]byte{"10.0.0.1.username": []byte("cpi@vsphere.local"), "10.0.0.1.password": []byte(cpiPassword)}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ks, Name: "vsphere-cloud-controller-manager-x1", CreationTimestamp: started,
			OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "vsphere-cloud-controller-manager"}}},
			Spec: corev1.PodSpec{NodeName: "cp-1", Containers: []corev1.Container{{Name: "vsphere-cloud-controller-manager",
				Args:         []string{"--cloud-provider=vsphere", "--cloud-config=/etc/cloud/vsphere.conf"},
				VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/etc/cloud"}}}},
				Volumes: []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "vsphere-cloud-config"}}}}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "vsphere-cloud-controller-manager", RestartCount: 7,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}},
		&coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ks, Name: "cloud-controller-manager"},
			Spec: coordv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &renew}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: cloud.TaintUninitialized, Value: "true", Effect: corev1.TaintEffectNoSchedule}}}},
	}
}

// cloudSnapshot is what Fetch assembles for vsphereCluster: check's own sources (one member,
// the leases, the nodes) plus the cloud report from the same clientset.
func cloudSnapshot(t *testing.T, cc CloudConfig) *Snapshot {
	t.Helper()
	ctx := context.Background()
	cs := fake.NewClientset(vsphereCluster()...)
	s := snapshot(member("apiserver-1", issA, kidA))
	for _, name := range []string{"kube-controller-manager", "cloud-controller-manager"} {
		st, err := liveness.LeaseStatus(ctx, cs, name, now)
		if err != nil {
			t.Fatal(err)
		}
		s.Leases = append(s.Leases, st)
	}
	s.Nodes = []Node{{Name: "worker-1", Uninitialized: true}}
	r, skip := FetchCloud(ctx, cs, cc, now, time.Second)
	s.Cloud = r
	if skip != "" {
		s.Sources[SrcCloud] = skip
	}
	return s
}

func count(fs []finding.Finding, id, object string) int {
	n := 0
	for _, f := range fs {
		if f.ID == id && f.Object == object {
			n++
		}
	}
	return n
}

func TestCheckIncludesCloud(t *testing.T) {
	ccmPod := "pod/kube-system/vsphere-cloud-controller-manager-x1"
	tests := []struct {
		name      string
		cfg       CloudConfig
		wantCloud bool
	}{
		{"default: found and judged, no login", CloudConfig{}, true},
		{"--no-cloud", CloudConfig{Skip: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Run(cloudSnapshot(t, tt.cfg), Registry())
			// Found by both the controllers check and pkg/cloud's symptoms: reported once.
			if n := count(r.Findings, idControllers, "lease/kube-system/cloud-controller-manager"); n != 1 {
				t.Errorf("stale CCM lease reported %d times, want 1", n)
			}
			if n := count(r.Findings, idNodesUninit, "node/worker-1"); n != 1 {
				t.Errorf("uninitialized node reported %d times, want 1", n)
			}
			var skipped string
			for _, s := range r.Skipped {
				if s.Check == "cloud-credentials" {
					skipped = s.Reason
				}
			}
			if got := count(r.Findings, idControllers, ccmPod); got != map[bool]int{true: 1, false: 0}[tt.wantCloud] {
				t.Errorf("crash-looping CCM finding %d times", got)
			}
			if !tt.wantCloud {
				if r.Cloud != nil || !strings.Contains(skipped, "--no-cloud") {
					t.Errorf("cloud = %+v, skipped reason %q; want no cloud, skipped --no-cloud", r.Cloud, skipped)
				}
				return
			}
			if skipped != "" {
				t.Fatalf("cloud-credentials skipped: %s", skipped)
			}
			if r.Cloud == nil || len(r.Cloud.Items) != 1 {
				t.Fatalf("cloud credentials = %+v, want the CPI Secret's one", r.Cloud)
			}
			it := r.Cloud.Items[0]
			if it.Test.Verdict != cloud.NotTested || r.Cloud.LoginAttempts != 0 || it.Source.Name != "vsphere-cloud-secret" || it.Account() != "cpi@vsphere.local@10.0.0.1" {
				t.Errorf("item %+v, attempts %d: want not-tested, no attempts, from the CPI Secret", it, r.Cloud.LoginAttempts)
			}
			if len(it.Consumers) == 0 || !it.Consumers[0].Rereads {
				t.Errorf("consumers %+v: want the CCM, re-reading the Secret", it.Consumers)
			}
			if len(r.byCheck["cloud-credentials"]) == 0 {
				t.Error("no findings attributed to cloud-credentials")
			}
			for _, f := range []report.Format{report.Table, report.JSON, report.JUnit, report.SARIF} {
				var b bytes.Buffer
				if err := report.Print(&b, f, r); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(b.String(), cpiPassword) {
					t.Errorf("%s output contains the password", f)
				}
				want := map[report.Format]string{report.Table: "CLOUD CREDENTIALS", report.JSON: `"verdict": "not-tested"`,
					report.JUnit: `<testcase name="cloud-credentials"`, report.SARIF: ccmPod}[f]
				if !strings.Contains(b.String(), want) {
					t.Errorf("%s output lacks %q:\n%s", f, want, b.String())
				}
			}
		})
	}
}

// TestCloudGolden pins the table and JSON of check with the cloud section.
func TestCloudGolden(t *testing.T) {
	r := Run(cloudSnapshot(t, CloudConfig{}), Registry())
	compareGolden(t, "cloud", r)
}
