// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"context"
	"io"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestClusterInputs checks which pods --from-cluster reads and how their lines are attributed (pure
// logic: the fake clientset's log body is a fixed text).
func TestClusterInputs(t *testing.T) {
	t.Parallel()
	pod := func(name, node string, labels map[string]string, containers ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: labels}, Spec: corev1.PodSpec{NodeName: node}}
		for _, c := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
		}
		return p
	}
	cs := fake.NewClientset(
		pod("kube-apiserver-cp-1.example", "cp-1.example", map[string]string{"component": "kube-apiserver"}, "kube-apiserver"),
		pod("kube-apiserver-cp-2.example", "cp-2.example", map[string]string{"component": "kube-apiserver"}, "kube-apiserver"),
		pod("kube-controller-manager-cp-1.example", "cp-1.example", map[string]string{"component": "kube-controller-manager"}, "kube-controller-manager"),
		pod("coredns-1", "cp-1.example", map[string]string{"k8s-app": "kube-dns"}, "coredns"),
	)
	pods := cs.CoreV1().Pods("kube-system")
	tests := []struct {
		name string
		sels []string
		want map[string]string // input name -> host
	}{
		{"apiservers", DefaultSelectors, map[string]string{
			"kube-apiserver-cp-1.example/kube-apiserver": "cp-1", "kube-apiserver-cp-2.example/kube-apiserver": "cp-2"}},
		{"with controllers", append(append([]string(nil), DefaultSelectors...), ControllerSelectors...), map[string]string{
			"kube-apiserver-cp-1.example/kube-apiserver": "cp-1", "kube-apiserver-cp-2.example/kube-apiserver": "cp-2",
			"kube-controller-manager-cp-1.example/kube-controller-manager": "cp-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ins, err := ClusterInputs(context.Background(), pods, ClusterOptions{Selectors: tt.sels})
			if err != nil {
				t.Fatal(err)
			}
			if len(ins) != len(tt.want) {
				t.Fatalf("got %d inputs, want %d", len(ins), len(tt.want))
			}
			for _, in := range ins {
				if host, ok := tt.want[in.Name]; !ok || host != in.Host {
					t.Errorf("input %s host %s, want %q", in.Name, in.Host, host)
				}
				rc, err := in.Open()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadAll(rc); err != nil {
					t.Fatal(err)
				}
				rc.Close()
			}
		})
	}
}
