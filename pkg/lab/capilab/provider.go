// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"path/filepath"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/cloud"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/controller"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/provider"
	labimage "github.com/credwatch/credwatch/pkg/lab/image"
)

// The lab provider's objects in a self-managed cluster (Config.ProviderInCluster), named as a
// Cluster API provider's are (the "capl-" namePrefix of its inventory namespace).
const (
	providerName   = "capl-controller-manager" // service account, ClusterRole and its binding, Deployment
	providerSecret = "capl-cloud"              // the cloud API's token and CA
	providerMount  = "/etc/lab-cloud"          // where the Pod reads them (the program's defaults)
)

// startCloud serves the lab's cloud (its hosts and balancers) to a provider controller outside
// the lab process: HTTPS on the lab network's gateway, where the workload hosts reach the
// machine, with a certificate the lab's CA issues and a new token.
func (c *Lab) startCloud() error {
	gw := c.mgmt.Network().Gateway()
	certPEM, keyPEM, err := c.mgmt.IssueCertificate("capi-lab-cloud", nil, []net.IP{net.IP(gw.AsSlice())}, nil, true)
	if err != nil {
		return fmt.Errorf("capi lab: issue the cloud API's certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("capi lab: the cloud API's certificate: %w", err)
	}
	token, err := cloud.NewToken()
	if err != nil {
		return err
	}
	srv, err := cloud.Start(cloud.ServerOptions{Cloud: c.cloud, Token: token, Address: net.JoinHostPort(gw.String(), "0"),
		Certificate: &cert, Log: c.cfg.Log})
	if err != nil {
		return err
	}
	c.cloudSrv, c.cloudToken = srv, token
	fmt.Fprintf(c.cfg.Log, "capi lab: the lab's cloud API listens at %s\n", srv.URL())
	return nil
}

// deployProvider runs the lab provider's controller in the workload cluster as its Cluster API
// managers run (StartInCluster): in its inventory namespace, a service account with a
// ClusterRole for what the controller reads and writes, the cloud API's token and CA as a
// Secret, and a Deployment of one replica on node's network reaching the API at endpoint
// (host:port). It waits until the Deployment is available and its Pod holds the Lease: from
// then on the Pod reconciles.
func (c *Lab) deployProvider(ctx context.Context, cs kubernetes.Interface, node, endpoint string) error {
	ns := capi.LabInfraNamespace()
	labels := map[string]string{capi.ManagerPodLabel: capi.LabInfraName()}
	create := func(what string, err error) error {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("capi lab: the lab provider: create %s: %w", what, err)
		}
		return nil
	}
	meta := metav1.ObjectMeta{Name: providerName, Namespace: ns, Labels: labels}
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err := create("namespace "+ns, err); err != nil {
		return err
	}
	_, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta}, metav1.CreateOptions{})
	if err := create("ServiceAccount", err); err != nil {
		return err
	}
	_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: providerName, Labels: labels}, Rules: providerRules()}, metav1.CreateOptions{})
	if err := create("ClusterRole", err); err != nil {
		return err
	}
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: providerName, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: providerName},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: providerName, Namespace: ns}},
	}, metav1.CreateOptions{})
	if err := create("ClusterRoleBinding", err); err != nil {
		return err
	}
	_, err = cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: providerSecret, Namespace: ns, Labels: labels},
		Data:       map[string][]byte{"token": []byte(c.cloudToken), "ca.crt": c.mgmt.CA()},
	}, metav1.CreateOptions{})
	if err := create("Secret", err); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return fmt.Errorf("capi lab: the lab provider: the endpoint %q: %w", endpoint, err)
	}
	d := providerDeployment(providerArgs{node: node, apiHost: host, apiPort: port, cloudURL: c.cloudSrv.URL(),
		namespace: namespace(c.cfg.Cluster)})
	_, err = cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
	if err := create("Deployment", err); err != nil {
		return err
	}
	if err := c.waitAvailable(ctx, cs, ns, 1, "lab provider controller"); err != nil {
		return err
	}
	return c.waitLeader(ctx, cs, ns)
}

// waitLeader waits until a provider Pod holds the provider's Lease in ns.
func (c *Lab) waitLeader(ctx context.Context, cs kubernetes.Interface, ns string) error {
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	last := "no Lease yet"
	for {
		l, err := cs.CoordinationV1().Leases(ns).Get(wctx, provider.LeaseName, metav1.GetOptions{})
		switch {
		case err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "":
			fmt.Fprintf(c.cfg.Log, "capi lab: the lab provider's Pod %s leads\n", *l.Spec.HolderIdentity)
			return nil
		case err != nil && !apierrors.IsNotFound(err):
			last = err.Error()
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("capi lab: the lab provider: no Pod took the Lease %s/%s: %w (%s)", ns, provider.LeaseName, wctx.Err(), last)
		case <-time.After(time.Second):
		}
	}
}

// providerRules are what the controller reads and writes: the provider's kinds, Cluster API's
// Clusters and Machines, the bootstrap data Secrets, and its Lease.
func providerRules() []rbacv1.PolicyRule {
	read := []string{"get", "list", "watch"}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{infra.Group}, Resources: []string{"labclusters", "labmachines", "labmachinetemplates"},
			Verbs: []string{"get", "list", "watch", "update", "patch"}},
		{APIGroups: []string{infra.Group}, Resources: []string{"labclusters/status", "labmachines/status"},
			Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{"cluster.x-k8s.io"}, Resources: []string{"clusters", "machines"}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}},
	}
}

// providerArgs place and configure the provider's Pod.
type providerArgs struct {
	node             string // the worker it runs on
	apiHost, apiPort string // the cluster's control-plane endpoint (no kube-proxy in the lab)
	cloudURL         string // the lab's cloud API
	namespace        string // the workload cluster's objects' namespace, which it watches
}

// providerDeployment is the provider's Deployment: one replica on a.node's network (it reaches
// the cloud API on the lab network, as the node does), leader election on as the managers'.
func providerDeployment(a providerArgs) *appsv1.Deployment {
	labels := map[string]string{capi.ManagerPodLabel: capi.LabInfraName(), "control-plane": "controller-manager"}
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: providerName, Namespace: capi.LabInfraNamespace(), Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName:            providerName,
					HostNetwork:                   true,
					DNSPolicy:                     corev1.DNSClusterFirstWithHostNet,
					NodeSelector:                  map[string]string{corev1.LabelHostname: a.node},
					Tolerations:                   []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}},
					TerminationGracePeriodSeconds: ptr.To(int64(10)),
					Containers: []corev1.Container{{
						Name: "manager", Image: labimage.ProviderRef, ImagePullPolicy: corev1.PullNever,
						Command: []string{"/usr/local/bin/provider"},
						Args:    []string{"--namespace=" + a.namespace, "--cloud-url=" + a.cloudURL},
						Env: []corev1.EnvVar{
							{Name: "KUBERNETES_SERVICE_HOST", Value: a.apiHost},
							{Name: "KUBERNETES_SERVICE_PORT", Value: a.apiPort},
							{Name: "POD_NAME", ValueFrom: field("metadata.name")},
							{Name: "POD_NAMESPACE", ValueFrom: field("metadata.namespace")},
							{Name: "GOMAXPROCS", Value: "2"},
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "cloud", MountPath: providerMount, ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "cloud", VolumeSource: corev1.VolumeSource{
						Secret: &corev1.SecretVolumeSource{SecretName: providerSecret}}}},
				},
			},
		},
	}
}

// podSteps are the steps in the provider Pods' container logs, in the order logged.
func podSteps(logs []string) []controller.Event {
	var out []controller.Event
	for _, l := range readCRI(logs, time.Time{}, time.Now().Add(time.Hour)) {
		if e, ok := provider.ParseStep([]byte(l.text)); ok {
			out = append(out, e)
		}
	}
	return out
}

// ProviderPodLogs are the container logs of the lab provider's Pods on the node Move ran them
// on, oldest run first; none unless Move ran them (Config.ProviderInCluster).
func (c *Lab) ProviderPodLogs() []string {
	if c.inCluster == nil || c.cloudSrv == nil {
		return nil
	}
	h, ok := c.pool.Get(c.inCluster.Node)
	if !ok {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(h.Node().PodLogsDir(), capi.LabInfraNamespace()+"_"+providerName+"-*", "manager", "*.log"))
	sort.Strings(files)
	return files
}
