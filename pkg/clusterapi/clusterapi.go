// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package clusterapi reads, from a Cluster API management cluster, what credwatch needs to know
// of one workload cluster: how to reach it (its <cluster>-kubeconfig Secret), its control-plane
// Machines, and the Cluster API version that rolls them (clusterctl's provider inventory). It
// only reads.
package clusterapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/credwatch/credwatch/pkg/check"
)

// Resources of the objects read: Cluster API's at v1beta1 (what Cluster API ≤ v1.10 serves;
// Versioned reads them at v1beta2 where it is served), clusterctl's inventory, Secrets.
var (
	ClusterResource             = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: V1Beta1, Resource: "clusters"}
	MachineResource             = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: V1Beta1, Resource: "machines"}
	KubeadmConfigResource       = schema.GroupVersionResource{Group: "bootstrap.cluster.x-k8s.io", Version: V1Beta1, Resource: "kubeadmconfigs"}
	KubeadmControlPlaneResource = schema.GroupVersionResource{Group: "controlplane.cluster.x-k8s.io", Version: V1Beta1, Resource: "kubeadmcontrolplanes"}
	ProviderResource            = schema.GroupVersionResource{Group: "clusterctl.cluster.x-k8s.io", Version: "v1alpha3", Resource: "providers"}
	SecretResource              = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	// ExtensionConfigResource is the runtime SDK's ExtensionConfig at v1beta2 (v1.11 on), which
	// every release with in-place updates (v1.12 on) serves; older ones answer NotFound.
	ExtensionConfigResource = schema.GroupVersionResource{Group: "runtime.cluster.x-k8s.io", Version: V1Beta2, Resource: "extensionconfigs"}
	// DeploymentResource is what a provider's manager runs as.
	DeploymentResource = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// Labels Cluster API puts on a cluster's Machines.
const (
	ClusterNameLabel  = "cluster.x-k8s.io/cluster-name"
	ControlPlaneLabel = "cluster.x-k8s.io/control-plane"
)

// Ref names a Cluster: NAMESPACE/NAME.
type Ref struct{ Namespace, Name string }

func (r Ref) String() string { return r.Namespace + "/" + r.Name }

// ParseRef reads "[NAMESPACE/]NAME"; without a namespace, the one defaultNS returns (the
// kubeconfig context's, as kubectl takes it) is used, asked only then.
func ParseRef(s string, defaultNS func() (string, error)) (Ref, error) {
	ns, name, hasNS := strings.Cut(s, "/")
	if !hasNS {
		name = s
	}
	if len(validation.IsDNS1123Subdomain(name)) > 0 || hasNS && len(validation.IsDNS1123Label(ns)) > 0 {
		return Ref{}, fmt.Errorf("%q: want [NAMESPACE/]NAME of a Cluster API Cluster", s)
	}
	if !hasNS {
		var err error
		if ns, err = defaultNS(); err != nil {
			return Ref{}, fmt.Errorf("%q: the kubeconfig's namespace: %w", s, err)
		}
	}
	return Ref{Namespace: ns, Name: name}, nil
}

// ErrNoCluster is a Cluster that the management cluster does not have.
var ErrNoCluster = errors.New("no such Cluster on the management cluster")

// Reader reads one management cluster.
type Reader struct {
	Dyn dynamic.Interface
	// Mapper is the management cluster's discovery (optional): which version of Cluster API's
	// groups it serves (Versioned).
	Mapper meta.RESTMapper

	once sync.Once
	v    *Versioned
}

// NewReader returns a Reader for the management cluster mgmt.
func NewReader(mgmt *rest.Config) (*Reader, error) {
	dyn, err := dynamic.NewForConfig(mgmt)
	if err != nil {
		return nil, fmt.Errorf("management cluster client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(mgmt)
	if err != nil {
		return nil, fmt.Errorf("management cluster discovery: %w", err)
	}
	return &Reader{Dyn: dyn, Mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}, nil
}

// versioned reads Cluster API's kinds at the version the management cluster serves.
func (r *Reader) versioned() *Versioned {
	r.once.Do(func() { r.v = NewVersioned(r.Dyn, r.Mapper) })
	return r.v
}

// Cluster returns the Cluster object, or an error wrapping ErrNoCluster.
func (r *Reader) Cluster(ctx context.Context, ref Ref) (*unstructured.Unstructured, error) {
	c, err := r.versioned().Get(ctx, ClusterResource.GroupResource(), ref.Namespace, ref.Name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("cluster %s: %w", ref, ErrNoCluster)
	case err != nil:
		return nil, fmt.Errorf("cluster %s: read the Cluster: %w", ref, err)
	}
	return c, nil
}

// WorkloadREST is the workload cluster's client configuration from its <cluster>-kubeconfig
// Secret, as clusterctl get kubeconfig reads it.
func (r *Reader) WorkloadREST(ctx context.Context, ref Ref) (*rest.Config, error) {
	name := ref.Name + "-kubeconfig"
	sec, err := r.Dyn.Resource(SecretResource).Namespace(ref.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: read Secret %s/%s: %w", ref, ref.Namespace, name, err)
	}
	cfg, err := KubeconfigREST(sec)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", ref, err)
	}
	return cfg, nil
}

// KubeconfigREST reads a <cluster>-kubeconfig Secret's value (data, or stringData as the API
// server merges it) through SafeREST: a kubeconfig from a cluster is data, never instructions.
// A Secret that does not hold a kubeconfig is named without quoting it or the parser's error:
// it carries a private key.
func KubeconfigREST(sec *unstructured.Unstructured) (*rest.Config, error) {
	what := "Secret " + sec.GetNamespace() + "/" + sec.GetName()
	data, err := SecretData(sec)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", what, err)
	case len(data["value"]) == 0:
		return nil, fmt.Errorf("%s has no data.value", what)
	}
	return SafeREST(data["value"], what+" data.value")
}

// ControlPlane is the Cluster's control-plane Machines and the Cluster API version that rolls
// them, for check.Config.ClusterAPI. A missing inventory leaves the version empty.
func (r *Reader) ControlPlane(ctx context.Context, ref Ref) (*check.ClusterAPI, error) {
	list, err := r.versioned().List(ctx, MachineResource.GroupResource(), ref.Namespace, metav1.ListOptions{
		LabelSelector: ClusterNameLabel + "=" + ref.Name + "," + ControlPlaneLabel})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: list its control-plane Machines: %w", ref, err)
	}
	ca := &check.ClusterAPI{Cluster: ref.String(), Machines: []check.Machine{}}
	for _, m := range list.Items {
		ca.Machines = append(ca.Machines, machineOf(m))
	}
	ca.Version, _ = r.Version(ctx)
	ca.ControlPlane = r.kcpStatus(ctx, ref)
	return ca, nil
}

// kcpStatus reads the KubeadmControlPlane the Cluster names as its control plane; nil when the
// Cluster or its control plane cannot be read, or is another kind (check then says nothing of
// the roll).
func (r *Reader) kcpStatus(ctx context.Context, ref Ref) *check.ControlPlaneStatus {
	cl, err := r.Cluster(ctx, ref)
	if err != nil {
		return nil
	}
	kind, _, _ := unstructured.NestedString(cl.Object, "spec", "controlPlaneRef", "kind")
	name, _, _ := unstructured.NestedString(cl.Object, "spec", "controlPlaneRef", "name")
	if kind != "KubeadmControlPlane" || name == "" {
		return nil
	}
	kcp, err := r.versioned().Get(ctx, KubeadmControlPlaneResource.GroupResource(), ref.Namespace, name)
	if err != nil {
		return nil
	}
	st := &check.ControlPlaneStatus{Name: ref.Namespace + "/" + name, Conditions: Conditions(kcp)}
	st.Replicas, _, _ = unstructured.NestedInt64(kcp.Object, "status", "replicas")
	if strings.HasSuffix(kcp.GetAPIVersion(), "/"+V1Beta2) {
		st.UpToDate, _, _ = unstructured.NestedInt64(kcp.Object, "status", "upToDateReplicas")
	} else {
		st.UpToDate, _, _ = unstructured.NestedInt64(kcp.Object, "status", "updatedReplicas")
	}
	return st
}

// Conditions reads a Cluster API object's status.conditions (metav1.Condition in v1beta2,
// Cluster API's own in v1beta1: the same four fields are read).
func Conditions(o *unstructured.Unstructured) []check.Condition {
	list, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	var out []check.Condition
	for _, c := range list {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { v, _ := m[k].(string); return v }
		out = append(out, check.Condition{Type: str("type"), Status: str("status"), Reason: str("reason"), Message: str("message")})
	}
	return out
}

func machineOf(u unstructured.Unstructured) check.Machine {
	str := func(fields ...string) string { s, _, _ := unstructured.NestedString(u.Object, fields...); return s }
	m := check.Machine{Name: u.GetName(), Phase: str("status", "phase"), NodeName: str("status", "nodeRef", "name"),
		ProviderID: str("spec", "providerID"), Version: str("spec", "version"), Deleting: u.GetDeletionTimestamp() != nil}
	if strings.HasSuffix(u.GetAPIVersion(), "/"+V1Beta2) {
		for _, c := range Conditions(&u) {
			if c.Type == "UpToDate" && (c.Status == "True" || c.Status == "False") {
				up := c.Status == "True"
				m.UpToDate = &up
			}
		}
	}
	addrs, _, _ := unstructured.NestedSlice(u.Object, "status", "addresses")
	for _, a := range addrs {
		if am, ok := a.(map[string]any); ok {
			if s, _ := am["address"].(string); s != "" {
				m.Addresses = append(m.Addresses, s)
			}
		}
	}
	return m
}

// Version is the Cluster API version of the kubeadm control-plane provider in clusterctl's
// inventory (else the core provider's); "" with an error when there is no inventory.
func (r *Reader) Version(ctx context.Context) (string, error) {
	list, err := r.Dyn.Resource(ProviderResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("clusterctl inventory: %w", err)
	}
	var core string
	for _, p := range list.Items {
		typ, _, _ := unstructured.NestedString(p.Object, "type")
		v, _, _ := unstructured.NestedString(p.Object, "version")
		switch typ {
		case "ControlPlaneProvider":
			if name, _, _ := unstructured.NestedString(p.Object, "providerName"); name == "kubeadm" && v != "" {
				return v, nil
			}
		case "CoreProvider":
			core = v
		}
	}
	if core == "" {
		return "", errors.New("clusterctl inventory: no kubeadm control-plane or core provider")
	}
	return core, nil
}
