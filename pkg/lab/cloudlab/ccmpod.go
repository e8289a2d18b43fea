// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/ociimage"
)

// The lab's cloud controller managers run as the providers' manifests run theirs: a DaemonSet in
// kube-system on the host network, tolerating the uninitialized and not-ready taints. The vSphere
// CPI's mounts its ConfigMap as /etc/cloud/vsphere.conf and reads the Secret through the API; the
// OpenStack one's mounts the Secret cloud-config as /etc/config (openstack.go).
const (
	CCMName   = "vsphere-cloud-controller-manager"
	CCMImage  = "local/vsphere-cloud-controller-manager:lab"
	OCCMName  = "openstack-cloud-controller-manager"
	OCCMImage = "local/openstack-cloud-controller-manager:lab"
	ccmPort   = 10258
)

// CCMImageTarball writes the images of the lab's cloud controller managers into dir and returns
// the tarball's path, for lab.Options.ExtraImages: the same binary (from binDir, it serves both
// providers) as the vSphere CPI's image and as the OpenStack one's.
func CCMImageTarball(binDir, dir string) (string, error) {
	bin, err := lab.Binary(binDir, lab.DefaultVersion, lab.CloudControllerManager)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", fmt.Errorf("cloud lab: %w", err)
	}
	imgs := map[string]v1.Image{}
	for ref, name := range map[string]string{CCMImage: CCMName, OCCMImage: OCCMName} {
		img, err := ociimage.Program(name, "amd64", data, time.Unix(0, 0), ociimage.Labels{Version: "lab"}).Build()
		if err != nil {
			return "", fmt.Errorf("cloud lab: image: %w", err)
		}
		imgs[ref] = img
	}
	out := filepath.Join(dir, "ccm-image.tar")
	if err := ociimage.WriteDockerArchive(out, imgs); err != nil {
		return "", fmt.Errorf("cloud lab: image: %w", err)
	}
	return out, nil
}

// CCMLogGlob matches the container logs of the cloud controller manager named name (CCMName,
// OCCMName) on every node, across restarts.
func CCMLogGlob(l *lab.Lab, name string) string {
	return filepath.Join(l.Dir(), "nodes", "*", "pod-logs", "kube-system_"+name+"-*", "*", "*.log")
}

// ccmSpec is what differs between the cloud controller managers' DaemonSets.
type ccmSpec struct {
	name, image string
	args        []string
	env         []corev1.EnvVar
	mountPath   string
	volume      corev1.VolumeSource
}

// vSphereCCM is the vSphere CPI's DaemonSet: its ConfigMap as /etc/cloud/vsphere.conf.
func vSphereCCM() ccmSpec {
	return ccmSpec{name: CCMName, image: CCMImage, mountPath: "/etc/cloud",
		args:   []string{"--cloud-provider=vsphere", "--cloud-config=/etc/cloud/vsphere.conf"},
		volume: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: CPIConfigMap}}}}
}

// deployCCM creates the cloud controller manager's ServiceAccount (bound to cluster-admin: the lab
// has no CPI ClusterRole) and DaemonSet.
func deployCCM(ctx context.Context, cs kubernetes.Interface, spec ccmSpec) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: spec.name, Namespace: cpiNamespace}}
	if _, err := cs.CoreV1().ServiceAccounts(cpiNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cloud lab: ServiceAccount: %w", err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: spec.name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: spec.name, Namespace: cpiNamespace}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cloud lab: ClusterRoleBinding: %w", err)
	}
	labels := map[string]string{"app": spec.name}
	args := append(slices.Clone(spec.args), "--leader-elect=true", "--controllers=cloud-node,cloud-node-lifecycle",
		fmt.Sprintf("--secure-port=%d", ccmPort), "--profiling=false", "--v=2")
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: spec.name, Namespace: cpiNamespace},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: spec.name,
					HostNetwork:        true,
					Tolerations: []corev1.Toleration{
						{Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: corev1.TaintEffectNoSchedule},
						{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule},
					},
					Containers: []corev1.Container{{
						Name: spec.name, Image: spec.image, ImagePullPolicy: corev1.PullNever,
						Command:      []string{"/usr/local/bin/" + spec.name},
						Args:         args,
						Env:          spec.env,
						VolumeMounts: []corev1.VolumeMount{{Name: "cloud-config-volume", MountPath: spec.mountPath, ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "cloud-config-volume", VolumeSource: spec.volume}},
				},
			},
		},
	}
	if _, err := cs.AppsV1().DaemonSets(cpiNamespace).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("cloud lab: DaemonSet: %w", err)
	}
	return nil
}

// RestartCCM deletes the Pods of the cloud controller manager named name (what `kubectl rollout
// restart` ends in) and waits until a new one runs.
func RestartCCM(ctx context.Context, cs kubernetes.Interface, name string) error {
	sel := metav1.ListOptions{LabelSelector: "app=" + name}
	old, err := cs.CoreV1().Pods(cpiNamespace).List(ctx, sel)
	if err != nil {
		return fmt.Errorf("cloud lab: %w", err)
	}
	gone := map[string]bool{}
	for _, p := range old.Items {
		gone[p.Name] = true
		if err := cs.CoreV1().Pods(cpiNamespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("cloud lab: delete %s: %w", p.Name, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	for {
		pods, err := cs.CoreV1().Pods(cpiNamespace).List(ctx, sel)
		if err == nil {
			for _, p := range pods.Items {
				if !gone[p.Name] && p.Status.Phase == corev1.PodRunning {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cloud lab: no new %s Pod running: %w", name, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// CCMStatus is how the cloud controller manager named name runs: "healthy" when every Pod's
// container runs and is ready, else the waiting reasons and restarts of those that do not
// ("CrashLoopBackOff after 2 restarts" per Pod, sorted).
func CCMStatus(ctx context.Context, cs kubernetes.Interface, name string) string {
	pods, err := cs.CoreV1().Pods(cpiNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		return "unknown: " + err.Error()
	}
	var bad []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, st := range p.Status.ContainerStatuses {
			switch {
			case st.State.Waiting != nil:
				bad = append(bad, fmt.Sprintf("%s after %d restarts", st.State.Waiting.Reason, st.RestartCount))
			case st.RestartCount > 0 && st.LastTerminationState.Terminated != nil && st.LastTerminationState.Terminated.ExitCode != 0:
				t := st.LastTerminationState.Terminated
				bad = append(bad, fmt.Sprintf("exited %d (%s), running again after %d restarts", t.ExitCode, t.Reason, st.RestartCount))
			case !st.Ready:
				bad = append(bad, fmt.Sprintf("not ready after %d restarts", st.RestartCount))
			}
		}
	}
	if len(bad) == 0 {
		return "healthy"
	}
	slices.Sort(bad)
	return strings.Join(bad, "; ")
}
