// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	labimage "github.com/credwatch/credwatch/pkg/lab/image"
)

// PlatformNamespace holds the platform controllers DeployPlatform makes.
const PlatformNamespace = "platform"

// PlatformController is one of the platform's controllers: a Deployment of one replica of the
// lab's platform program (package platform) with a Lease of its name.
type PlatformController struct {
	Name string `json:"name"`
	// ControlPlane places it on the control-plane machines (a toleration and a node selector),
	// where the roll's drains evict it; otherwise it runs on the workers.
	ControlPlane bool `json:"controlPlane"`
}

// DefaultPlatform are the controllers of the self-managed scenarios: two on the control plane
// (as cert-manager's webhook or a CNI operator often are), two on the workers.
func DefaultPlatform() []PlatformController {
	return []PlatformController{{"flux", false}, {"kyverno", false}, {"cert-manager", true}, {"operator", true}}
}

// DeployPlatform creates the platform's controllers in the workload cluster (after Move, or on
// any cluster of the lab whose hosts carry the lab images): namespace PlatformNamespace, one
// service account each with a Role for Leases and ConfigMaps, and the Deployments. Their Pods
// reach the API through the cluster's endpoint (the lab runs no kube-proxy) with their own
// projected tokens.
func (c *Lab) DeployPlatform(ctx context.Context, rc *rest.Config, ctrls []PlatformController) error {
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("capi lab: platform: %w", err)
	}
	u, err := url.Parse(rc.Host)
	if err != nil {
		return fmt.Errorf("capi lab: platform: the endpoint %q: %w", rc.Host, err)
	}
	ns := PlatformNamespace
	ignoreExists := func(what string, err error) error {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("capi lab: platform: create %s: %w", what, err)
		}
		return nil
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err := ignoreExists("namespace", err); err != nil {
		return err
	}
	_, err = cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "platform-controller"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		},
	}, metav1.CreateOptions{})
	if err := ignoreExists("Role", err); err != nil {
		return err
	}
	for _, p := range ctrls {
		_, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: p.Name}}, metav1.CreateOptions{})
		if err := ignoreExists("ServiceAccount "+p.Name, err); err != nil {
			return err
		}
		_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "platform-controller"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: p.Name, Namespace: ns}},
		}, metav1.CreateOptions{})
		if err := ignoreExists("RoleBinding "+p.Name, err); err != nil {
			return err
		}
		_, err = cs.AppsV1().Deployments(ns).Create(ctx, platformDeployment(p, u.Hostname(), u.Port()), metav1.CreateOptions{})
		if err := ignoreExists("Deployment "+p.Name, err); err != nil {
			return err
		}
	}
	return c.waitAvailable(ctx, cs, ns, len(ctrls), "platform controllers")
}

// platformDeployment is controller p's Deployment.
func platformDeployment(p PlatformController, host, port string) *appsv1.Deployment {
	labels := map[string]string{"app": p.Name, "credwatch.io/platform": "true"}
	replicas := int32(1)
	spec := corev1.PodSpec{
		ServiceAccountName:            p.Name,
		TerminationGracePeriodSeconds: new(int64),
		Containers: []corev1.Container{{
			Name: "controller", Image: labimage.PlatformRef, ImagePullPolicy: corev1.PullNever,
			Command: []string{"/usr/local/bin/platform"},
			Args:    []string{"--name=" + p.Name},
			Env: []corev1.EnvVar{
				{Name: "KUBERNETES_SERVICE_HOST", Value: host},
				{Name: "KUBERNETES_SERVICE_PORT", Value: port},
				{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			},
		}},
	}
	if p.ControlPlane {
		spec.NodeSelector = map[string]string{"node-role.kubernetes.io/control-plane": ""}
		spec.Tolerations = []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: PlatformNamespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": p.Name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

// waitAvailable waits until n Deployments in ns have an available replica; what names them in
// the log and in errors.
func (c *Lab) waitAvailable(ctx context.Context, cs kubernetes.Interface, ns string, n int, what string) error {
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	last := ""
	for {
		ds, err := cs.AppsV1().Deployments(ns).List(wctx, metav1.ListOptions{})
		if err == nil {
			ready := 0
			for _, d := range ds.Items {
				if d.Status.AvailableReplicas > 0 {
					ready++
				}
			}
			if ready >= n {
				fmt.Fprintf(c.cfg.Log, "capi lab: %d %s running\n", ready, what)
				return nil
			}
			last = fmt.Sprintf("%d of %d available", ready, n)
		} else {
			last = err.Error()
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("capi lab: %s: %w (%s)", what, wctx.Err(), last)
		case <-time.After(time.Second):
		}
	}
}

// PlatformLogs are the container logs of the platform controllers on every host the lab has
// made (hosts gone with their machines included), sorted.
func (c *Lab) PlatformLogs() []string {
	var out []string
	for _, dir := range c.podLogDirs() {
		files, _ := filepath.Glob(filepath.Join(dir, PlatformNamespace+"_*", "controller", "*.log"))
		out = append(out, files...)
	}
	sort.Strings(out)
	return out
}
