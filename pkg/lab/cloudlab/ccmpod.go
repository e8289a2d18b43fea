package cloudlab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// The lab's cloud controller manager runs as the vSphere CPI's manifests run theirs: a DaemonSet in
// kube-system on the host network, tolerating the uninitialized and not-ready taints, mounting the
// ConfigMap as /etc/cloud/vsphere.conf and reading the Secret through the API.
const (
	CCMName  = "vsphere-cloud-controller-manager"
	CCMImage = "local/vsphere-cloud-controller-manager:lab"
	ccmPort  = 10258
)

// CCMImageTarball writes an image holding the lab's cloud controller manager binary (from binDir)
// into s.Dir and returns its path, for lab.Options.ExtraImages.
func (s *Setup) CCMImageTarball(binDir string) (string, error) {
	bin, err := lab.Binary(binDir, lab.DefaultVersion, lab.CloudControllerManager)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", fmt.Errorf("cloud lab: %w", err)
	}
	img, err := ociimage.Program(CCMName, "amd64", data, time.Unix(0, 0), ociimage.Labels{Version: "lab"}).Build()
	if err != nil {
		return "", fmt.Errorf("cloud lab: image: %w", err)
	}
	out := filepath.Join(s.Dir, "ccm-image.tar")
	if err := ociimage.WriteDockerArchive(out, map[string]v1.Image{CCMImage: img}); err != nil {
		return "", fmt.Errorf("cloud lab: image: %w", err)
	}
	return out, nil
}

// CCMLogGlob matches the cloud controller manager's container logs on every node, across restarts.
func CCMLogGlob(l *lab.Lab) string {
	return filepath.Join(l.Dir(), "nodes", "*", "pod-logs", "kube-system_"+CCMName+"-*", "*", "*.log")
}

// deployCCM creates the cloud controller manager's ServiceAccount (bound to cluster-admin: the lab
// has no CPI ClusterRole) and DaemonSet.
func deployCCM(ctx context.Context, cs kubernetes.Interface) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: CCMName, Namespace: cpiNamespace}}
	if _, err := cs.CoreV1().ServiceAccounts(cpiNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cloud lab: ServiceAccount: %w", err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: CCMName},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: CCMName, Namespace: cpiNamespace}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cloud lab: ClusterRoleBinding: %w", err)
	}
	labels := map[string]string{"app": CCMName}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: CCMName, Namespace: cpiNamespace},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: CCMName,
					HostNetwork:        true,
					Tolerations: []corev1.Toleration{
						{Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: corev1.TaintEffectNoSchedule},
						{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule},
					},
					Containers: []corev1.Container{{
						Name: CCMName, Image: CCMImage, ImagePullPolicy: corev1.PullNever,
						Command: []string{"/usr/local/bin/" + CCMName},
						Args: []string{
							"--cloud-provider=vsphere", "--cloud-config=/etc/cloud/vsphere.conf",
							"--leader-elect=true", "--controllers=cloud-node,cloud-node-lifecycle",
							fmt.Sprintf("--secure-port=%d", ccmPort), "--profiling=false", "--v=2",
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "vsphere-config-volume", MountPath: "/etc/cloud", ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "vsphere-config-volume", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: CPIConfigMap}},
					}}},
				},
			},
		},
	}
	if _, err := cs.AppsV1().DaemonSets(cpiNamespace).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("cloud lab: DaemonSet: %w", err)
	}
	return nil
}

// RestartCCM deletes the cloud controller manager's Pods (what `kubectl rollout restart` ends in)
// and waits until a new one runs.
func RestartCCM(ctx context.Context, cs kubernetes.Interface) error {
	sel := metav1.ListOptions{LabelSelector: "app=" + CCMName}
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
			return fmt.Errorf("cloud lab: no new %s Pod running: %w", CCMName, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
