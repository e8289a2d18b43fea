// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/credwatch/credwatch/pkg/lab"
)

// testDeployment creates a Deployment through the LB and waits for the controller manager to
// create its ReplicaSet and Pod objects (there is no kubelet, so the pods stay Pending).
func testDeployment(t *testing.T, l *lab.Lab) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := clientset(t, l, "")
	labels := map[string]string{"app": "kcm-probe"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "kcm-probe", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none"}}},
			},
		},
	}
	if _, err := c.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	for {
		rs, err1 := c.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=kcm-probe"})
		pods, err2 := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=kcm-probe"})
		if err1 == nil && err2 == nil && len(rs.Items) == 1 && len(pods.Items) == 2 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("deployment kcm-probe: no ReplicaSet and 2 Pods in time (rs %v, pods %v, errors %v %v)", rs, pods, err1, err2)
		case <-time.After(time.Second):
		}
	}
	if err := l.StopControllerManager(ctx); err != nil || l.ControllerManagerRunning() {
		t.Fatalf("StopControllerManager: %v (running %t)", err, l.ControllerManagerRunning())
	}
	if err := l.StartControllerManager(ctx); err != nil || !l.ControllerManagerRunning() {
		t.Fatalf("StartControllerManager: %v (running %t)", err, l.ControllerManagerRunning())
	}
}
