// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/kubeadm/images"
)

// ImageRegistry is where Cluster API publishes its managers' images; the lab tags its own
// builds of them with the same names (ImageRefs), so the Deployments read as the released ones.
const ImageRegistry = "registry.k8s.io/cluster-api"

// ImageRefs are the release's three managers as images, for images.BuildPrograms: the lab's
// binary of each under the name and tag of the released image.
func ImageRefs(version string) []images.Ref {
	var out []images.Ref
	for _, name := range ManagerNames() {
		out = append(out, images.Ref{Tag: ImageRegistry + "/" + name + ":" + version, Binary: name,
			Dir: "capi-" + version, Make: MakeTarget})
	}
	return out
}

// InClusterOptions configures StartInCluster: a release's managers run as Deployments in a
// cluster (the workload cluster they manage, once clusterctl move has moved its objects there),
// as `clusterctl init` installs them.
type InClusterOptions struct {
	Version string
	BinDir  string
	// Config reaches the cluster the managers are installed in, with rights to create CRDs,
	// namespaces, Deployments and webhook configurations (its admin).
	Config *rest.Config
	// Node is the node the managers' Pods run on and NodeIP its address: they run on the host
	// network (the lab has no Service routing for webhooks), so the apiservers call their
	// webhooks at NodeIP:9443-9445.
	Node   string
	NodeIP net.IP
	// Endpoint is where the Pods reach the API (host:port; the cluster's control-plane
	// endpoint): the lab runs no kube-proxy, so the kubernetes Service's ClusterIP leads nowhere.
	Endpoint string
	Wait     time.Duration // for the CRDs and each Deployment; default 3 minutes
	Log      io.Writer
}

// InCluster is a release's managers installed in a cluster.
type InCluster struct {
	Release Release
	Node    string // where the managers run
	api     *api
	cs      kubernetes.Interface
	log     io.Writer
}

// Deployment names and labels of the managers, as Cluster API's manifests name them
// (config/manager/manager.yaml with each provider's namePrefix).
func deploymentName(i int) string {
	return [...]string{"capi-controller-manager", "capi-kubeadm-bootstrap-controller-manager",
		"capi-kubeadm-control-plane-controller-manager"}[i]
}

// ManagerPodLabel selects a manager's Pods: cluster.x-k8s.io/provider=<inventory name>.
const ManagerPodLabel = "cluster.x-k8s.io/provider"

// The ports a manager takes on its node's network: webhooks at WebhookPort+i, health (readyz,
// healthz) at inClusterHealthPort+i, diagnostics (metrics) at inClusterDiagPort+i.
const (
	inClusterHealthPort = 9450
	inClusterDiagPort   = 8450
	webhookCertDir      = "/tmp/k8s-webhook-server/serving-certs"
	webhookCertSecret   = "capi-webhook-service-cert"
)

// StartInCluster installs version's managers in o.Config's cluster as `clusterctl init` would:
// the CRDs (their conversion webhooks at NodeIP), clusterctl's inventory, a namespace, service
// account (bound to cluster-admin: the lab keeps no copy of each provider's ClusterRole),
// serving-certificate Secret and Deployment per manager, with leader election on as released,
// and, once each Deployment is available, the webhook configurations. l's CA issues the
// serving certificate and is the caBundle.
func StartInCluster(ctx context.Context, l *lab.Lab, o InClusterOptions) (*InCluster, error) {
	if o.BinDir == "" {
		o.BinDir = l.Options().BinDir
	}
	if o.Wait <= 0 {
		o.Wait = 3 * time.Minute
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Config == nil || o.Node == "" || o.NodeIP == nil || o.Endpoint == "" {
		return nil, errors.New("capi in cluster: a cluster, a node, its address and the API endpoint are required")
	}
	rel, err := Find(o.BinDir, o.Version)
	if err != nil {
		return nil, err
	}
	a, err := newAPI(o.Config)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(o.Config)
	if err != nil {
		return nil, fmt.Errorf("capi in cluster: client: %w", err)
	}
	ic := &InCluster{Release: rel, Node: o.Node, api: a, cs: cs, log: o.Log}
	// The in-cluster managers reuse the process managers' steps: CRDs, inventory, webhooks.
	m := &Managers{Release: rel, WebhookHost: o.NodeIP.String(), api: a, log: o.Log}
	conv := &Conversion{Base: map[string]string{}, CA: l.CA()}
	for i, mgr := range rel.Managers {
		conv.Base[mgr.Name] = m.webhookBase(i)
	}
	n, err := rel.InstallCRDs(ctx, a.dyn, o.Wait, conv)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "capi in cluster: %d CRDs of %s established\n", n, rel.Version)
	if err := m.writeInventory(ctx, o.Wait); err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := l.IssueCertificate("capi-webhooks", nil, []net.IP{o.NodeIP}, nil, true)
	if err != nil {
		return nil, fmt.Errorf("capi in cluster: issue the webhook serving certificate: %w", err)
	}
	for i := range rel.Managers {
		if err := ic.deploy(ctx, i, o, certPEM, keyPEM); err != nil {
			return nil, err
		}
	}
	for i, mgr := range rel.Managers {
		if err := ic.waitAvailable(ctx, i, o.Wait); err != nil {
			return nil, fmt.Errorf("capi in cluster: %s: %w", mgr.Name, err)
		}
	}
	if err := m.registerWebhooks(ctx, l.CA()); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "capi in cluster: %s managers run on node %s, webhooks on %s:%d-%d\n", rel.Version, o.Node, o.NodeIP, WebhookPort, WebhookPort+2)
	return ic, nil
}

// deploy creates the i-th manager's namespace, service account, binding, certificate Secret and
// Deployment.
func (ic *InCluster) deploy(ctx context.Context, i int, o InClusterOptions, certPEM, keyPEM []byte) error {
	p := inventoryProviders[i]
	ns, name := p.namespace, deploymentName(i)
	create := func(what string, err error) error {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("capi in cluster: create %s %s/%s: %w", what, ns, name, err)
		}
		return nil
	}
	meta := metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{ManagerPodLabel: p.name}}
	_, err := ic.cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta}, metav1.CreateOptions{})
	if err := create("ServiceAccount", err); err != nil {
		return err
	}
	_, err = ic.cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: meta.Labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
	}, metav1.CreateOptions{})
	if err := create("ClusterRoleBinding", err); err != nil {
		return err
	}
	_, err = ic.cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: webhookCertSecret, Namespace: ns, Labels: meta.Labels},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}, metav1.CreateOptions{})
	if err := create("Secret", err); err != nil {
		return err
	}
	_, err = ic.cs.AppsV1().Deployments(ns).Create(ctx, ic.deployment(i, o), metav1.CreateOptions{})
	return create("Deployment", err)
}

// deployment is the i-th manager's Deployment: one replica on o.Node's network, leader
// election on, probes on its health port, the API at o.Endpoint.
func (ic *InCluster) deployment(i int, o InClusterOptions) *appsv1.Deployment {
	p, mgr := inventoryProviders[i], ic.Release.Managers[i]
	labels := map[string]string{ManagerPodLabel: p.name, "control-plane": "controller-manager"}
	host, port, _ := net.SplitHostPort(o.Endpoint)
	health := inClusterHealthPort + i
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path, Port: intstr.FromInt32(int32(health)), Host: "127.0.0.1"}}, PeriodSeconds: 10}
	}
	replicas := int32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: deploymentName(i), Namespace: p.namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: deploymentName(i),
					HostNetwork:        true,
					DNSPolicy:          corev1.DNSClusterFirstWithHostNet,
					NodeSelector:       map[string]string{corev1.LabelHostname: o.Node},
					Tolerations: []corev1.Toleration{
						{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule},
					},
					TerminationGracePeriodSeconds: ptr.To(int64(10)),
					Containers: []corev1.Container{{
						Name: "manager", Image: ImageRegistry + "/" + mgr.Name + ":" + ic.Release.Version,
						ImagePullPolicy: corev1.PullNever,
						Command:         []string{mgr.Name},
						Args: []string{
							"--leader-elect",
							"--webhook-port=" + strconv.Itoa(WebhookPort+i),
							"--webhook-cert-dir=" + webhookCertDir,
							"--health-addr=127.0.0.1:" + strconv.Itoa(health),
							"--diagnostics-address=127.0.0.1:" + strconv.Itoa(inClusterDiagPort+i),
							"--insecure-diagnostics",
						},
						Env: []corev1.EnvVar{
							{Name: "KUBERNETES_SERVICE_HOST", Value: host},
							{Name: "KUBERNETES_SERVICE_PORT", Value: port},
							{Name: "GOMAXPROCS", Value: "2"},
						},
						ReadinessProbe: probe("/readyz"),
						LivenessProbe:  probe("/healthz"),
						VolumeMounts:   []corev1.VolumeMount{{Name: "cert", MountPath: webhookCertDir, ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "cert", VolumeSource: corev1.VolumeSource{
						Secret: &corev1.SecretVolumeSource{SecretName: webhookCertSecret}}}},
				},
			},
		},
	}
}

// waitAvailable waits until the i-th manager's Deployment has an available replica.
func (ic *InCluster) waitAvailable(ctx context.Context, i int, wait time.Duration) error {
	p := inventoryProviders[i]
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var last string
	for {
		d, err := ic.cs.AppsV1().Deployments(p.namespace).Get(wctx, deploymentName(i), metav1.GetOptions{})
		switch {
		case err != nil:
			last = err.Error()
		case d.Status.AvailableReplicas > 0:
			return nil
		default:
			last = ic.podState(wctx, p)
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("not available within %s (%s)", wait, last)
		case <-time.After(time.Second):
		}
	}
}

// podState says how the provider's Pods are doing, for an error.
func (ic *InCluster) podState(ctx context.Context, p inventoryProvider) string {
	pods, err := ic.cs.CoreV1().Pods(p.namespace).List(ctx, metav1.ListOptions{LabelSelector: ManagerPodLabel + "=" + p.name})
	if err != nil {
		return err.Error()
	}
	if len(pods.Items) == 0 {
		return "no Pod yet"
	}
	st := pods.Items[0].Status
	out := string(st.Phase)
	for _, c := range st.ContainerStatuses {
		if c.State.Waiting != nil {
			out += ", " + c.State.Waiting.Reason
		}
		out += fmt.Sprintf(", %d restarts", c.RestartCount)
	}
	return out
}

// Namespaces are the managers' namespaces, in ManagerNames' order.
func Namespaces() []string {
	var out []string
	for _, p := range inventoryProviders {
		out = append(out, p.namespace)
	}
	return out
}

// PodLogGlob matches manager's container logs under a node's pod log directory
// (NAMESPACE_POD_UID/CONTAINER/N.log), across Pods and restarts.
func (ic *InCluster) PodLogGlob(manager string) string {
	for i, m := range ManagerNames() {
		if m == manager {
			return filepath.Join(inventoryProviders[i].namespace+"_"+deploymentName(i)+"-*", "manager", "*.log")
		}
	}
	return "no-such-manager"
}
