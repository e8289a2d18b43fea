// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package images

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/lab/node"
)

// TestIntegrationImagesOnNode imports the v1.30.14 kubeadm images into a lab node's containerd
// (lab.Options.ExtraImages, as a kubeadm host would), checks `ctr images ls` lists every tag, and
// runs a pod whose containers are the control-plane images, each running its binary's --version
// by name (as kubeadm's manifests call them), with imagePullPolicy Never and seccomp
// RuntimeDefault: containerd, runc and the images' root user and PATH, not only a chroot.
func TestIntegrationImagesOnNode(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: skipped under -short")
	}
	labtest.CAPIAll(t)
	binDir := needV130Binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	t0 := time.Now()
	// The lab's image cache directory (lab/nodes.go), so the lab images tarball is shared.
	tarball, err := Build(ctx, Config{BinDir: binDir, Version: "v1.30.14", OutDir: filepath.Join(filepath.Dir(binDir), "images")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FIGURE kubeadm images %s in %s", filepath.Base(tarball), time.Since(t0).Round(time.Millisecond))
	l := labtest.Start(t, lab.Options{Members: 1, Nodes: 1, ExtraImages: []string{tarball}})
	nodes := l.Nodes()
	if len(nodes) != 1 {
		t.Fatalf("lab has %d nodes, want 1", len(nodes))
	}

	// The node's containerd socket is <node dir>/containerd/containerd.sock (pkg/lab/node).
	out, err := exec.CommandContext(ctx, node.DefaultCtr, "-a", filepath.Join(nodes[0].Dir, "containerd", "containerd.sock"),
		"-n", "k8s.io", "images", "ls", "-q").CombinedOutput()
	if err != nil {
		t.Fatalf("ctr images ls: %v\n%s", err, out)
	}
	listed := strings.Fields(string(out))
	refs, err := Refs("v1.30.14")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if !r.Optional && !slices.Contains(listed, r.Tag) {
			t.Errorf("ctr images ls on %s lacks %s:\n%s", nodes[0].Name, r.Tag, out)
		}
	}

	cs, err := kubernetes.NewForConfig(l.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"kube-apiserver": "Kubernetes v1.30.14", "kube-controller-manager": "Kubernetes v1.30.14",
		"kube-scheduler": "Kubernetes v1.30.14", "etcd": "etcd Version: " + strings.TrimPrefix(lab.EtcdVersion, "v"),
	}
	pod := versionPod(refs, nodes[0].Name)
	t1 := time.Now()
	p := runToCompletion(t, ctx, cs, pod)
	t.Logf("FIGURE pod of %d control-plane images Succeeded %s after create", len(pod.Spec.Containers), time.Since(t1).Round(time.Millisecond))
	for _, c := range p.Spec.Containers {
		logs, err := cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name}).DoRaw(ctx)
		if err != nil {
			t.Fatalf("logs of %s: %v", c.Name, err)
		}
		if !strings.Contains(string(logs), want[c.Name]) {
			t.Errorf("%s (%s) --version printed %q, want %q", c.Name, c.Image, logs, want[c.Name])
		}
	}
}

// versionPod is a pod on nodeName with one container per binary image of refs, each running
// `NAME --version`, under the seccomp profile kubeadm's static pods set (RuntimeDefault,
// k8s.io/kubernetes@v1.30.14/cmd/kubeadm/app/util/staticpod/utils.go:84-87).
func versionPod(refs []Ref, nodeName string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeadm-images", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: nodeName, RestartPolicy: corev1.RestartPolicyNever, AutomountServiceAccountToken: ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}},
	}
	for _, r := range refs {
		if r.Binary == Pause || r.Optional {
			continue
		}
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
			Name: r.Binary, Image: r.Tag, ImagePullPolicy: corev1.PullNever, Command: []string{r.Binary, "--version"},
		})
	}
	return pod
}

// runToCompletion creates pod (retrying while the namespace's default ServiceAccount is not
// there yet) and waits until it Succeeded, failing when it Failed.
func runToCompletion(t *testing.T, ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	for {
		_, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("create pod %s: %v", pod.Name, err)
		}
		time.Sleep(time.Second)
	}
	for {
		p, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		switch {
		case err == nil && p.Status.Phase == corev1.PodSucceeded:
			return p
		case err == nil && p.Status.Phase == corev1.PodFailed:
			t.Fatalf("pod %s Failed: %+v", pod.Name, p.Status.ContainerStatuses)
		case ctx.Err() != nil:
			t.Fatalf("pod %s did not succeed: %v (%v)", pod.Name, ctx.Err(), err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
