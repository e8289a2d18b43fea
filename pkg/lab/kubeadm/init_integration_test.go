// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package kubeadm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/cloudinit"
	"github.com/credwatch/credwatch/pkg/lab/kubeadm"
	"github.com/credwatch/credwatch/pkg/lab/kubeadm/images"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/lab/node"
	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// TestIntegrationKubeadmInit runs `kubeadm init` (v1.30.14) on a lab host in kubeadm mode, as
// Cluster API's bootstrap data does: the host's real kubelet (v1.29.15, within skew) runs
// kubeadm's static pods from the images the lab built from its own binaries, with no registry and
// no systemd. It checks the control plane kubeadm made: the Node Ready, the four mirror pods
// Running (what KubeadmControlPlane's preflight reads), and that stopping the host leaves nothing
// on the machine.
func TestIntegrationKubeadmInit(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: skipped under -short")
	}
	labtest.CAPIAll(t)
	binDir := lab.DefaultBinDir()
	bins, err := kubeadm.FindBinaries(binDir, "")
	if err != nil {
		t.Skipf("%v", err)
	}
	kubelet, err := lab.Binary(binDir, lab.InTreeCloudVersion, "kubelet")
	if err != nil {
		t.Skipf("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	tarball, err := images.Build(ctx, images.Config{BinDir: binDir, Version: kubeadm.Version, OutDir: filepath.Join(filepath.Dir(binDir), "images")})
	if err != nil {
		t.Skipf("kubeadm images: %v", err)
	}
	// The lab gives the network; its own control plane is not used.
	l := labtest.Start(t, lab.Options{Members: 1})
	pool := kubeadm.NewPool(kubeadm.PoolConfig{
		Network: l.Network(), Dir: filepath.Join(l.Dir(), "kubeadm-hosts"), Kubelet: kubelet, Binaries: bins,
		Images: []string{tarball}, Log: labtest.Log(t),
	})
	cfg, err := kubeadm.InitConfig{
		Lab: kubeadm.LabSettings(node.KubeadmPatchesDir), Name: "{{ ds.meta_data.local_hostname }}",
		CRISocket: "unix://" + node.KubeadmCRISocket, KubernetesVersion: kubeadm.Version,
	}.YAML()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	h, err := pool.Create(ctx, "kadm-1", bootstrapData(t, cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := h.Node()
	t.Cleanup(func() {
		if err := pool.Close(context.Background()); err != nil {
			t.Errorf("stop: %v", err)
		}
		if left := n.Leftovers(); len(left) > 0 {
			t.Errorf("leftovers: %v", left)
		}
		if _, ok := l.Network().Host("kadm-1"); ok {
			t.Errorf("the host's network namespace is still there")
		}
	})
	t.Logf("FIGURE kubeadm host up (containerd, images imported) in %s", time.Since(t0).Round(time.Millisecond))

	t1 := time.Now()
	for {
		done, err := h.BootstrapDone()
		if done && (err != nil || !h.Bootstrapped()) {
			t.Fatalf("bootstrap: %v (sentinel written: %v)\n%s\nkubelet:\n%s", err, h.Bootstrapped(),
				proc.Tail(n.LogFile("cloud-init"), 40), proc.Tail(n.LogFile("kubelet"), 30))
		}
		if done {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("bootstrap did not end: %v\n%s", ctx.Err(), proc.Tail(n.LogFile("cloud-init"), 40))
		}
		time.Sleep(time.Second)
	}
	t.Logf("FIGURE kubeadm init (bootstrap commands) in %s", time.Since(t1).Round(time.Millisecond))
	log, _ := os.ReadFile(n.LogFile("cloud-init"))
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, "[WARNING") {
			t.Logf("kubeadm: %s", line)
		}
	}

	rc, err := clientcmd.BuildConfigFromFlags("", h.AdminKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 3*time.Minute)
	defer wcancel()
	if err := n.WaitReady(wctx, cs); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"} {
		name := c + "-kadm-1"
		for {
			p, err := cs.CoreV1().Pods("kube-system").Get(wctx, name, metav1.GetOptions{})
			if err == nil && p.Status.Phase == corev1.PodRunning && ready(p) {
				break
			}
			if wctx.Err() != nil {
				t.Fatalf("mirror pod %s not Running and Ready: %v (%v)", name, wctx.Err(), err)
			}
			time.Sleep(time.Second)
		}
	}
	t.Logf("FIGURE kubeadm control plane ready (Node Ready, four mirror pods Running) %s after init", time.Since(t1).Round(time.Millisecond))
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// bootstrapData is a cloud-config of the shape Cluster API's kubeadm bootstrap provider writes
// (bootstrap/kubeadm/internal/cloudinit/controlplane_init.go): the jinja header, the kubeadm
// configuration in write_files, kubeadm init and the success sentinel in runcmd.
func bootstrapData(t *testing.T, kubeadmYAML []byte) []byte {
	doc, err := yaml.Marshal(map[string]any{
		"write_files": []map[string]any{{"path": "/run/kubeadm/kubeadm.yaml", "owner": "root:root", "permissions": "0640", "content": string(kubeadmYAML)}},
		"runcmd":      []string{"kubeadm init --config /run/kubeadm/kubeadm.yaml --v=1 && mkdir -p /run/cluster-api && echo success > " + cloudinit.Sentinel},
	})
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte("## template: jinja\n#cloud-config\n"), doc...)
}
