// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package live reads the current side of credwatch preflight from a Cluster API management
// cluster: the Cluster, its KubeadmControlPlane, Machines and KubeadmConfigs, the public key of
// the <cluster>-sa Secret (a private key is dropped as it is read), the provider cluster,
// clusterctl Provider objects, and, through the <cluster>-kubeconfig Secret, the issuer,
// audiences and JWKS each workload member serves. It only reads: no create, update or delete,
// and no TokenRequest, on either cluster. What it cannot read beyond the Cluster and its control
// plane becomes a note in the Set, never a failure.
package live

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/clusterapi"
	"github.com/credwatch/credwatch/pkg/limits"
	"github.com/credwatch/credwatch/pkg/preflight/input"
	"github.com/credwatch/credwatch/pkg/redact"
)

// Config says which cluster to read and how.
type Config struct {
	// Mgmt reaches the management cluster; Client and Mapper are built from it when nil.
	Mgmt *rest.Config
	// Client reads the management cluster.
	Client dynamic.Interface
	// Mapper finds the resource of the kinds the Cluster refers to (control plane, provider
	// cluster, provider machines). Without it (and without Mgmt), a kind's resource is its
	// lower-case plural, as Cluster API's kinds have it.
	Mapper meta.RESTMapper
	// Namespace (default "default") and Name of the Cluster API Cluster.
	Namespace, Name string
	// Timeout bounds each call to a workload member (default 10 s).
	Timeout time.Duration
	// Members reads what the workload members serve through the workload kubeconfig; default
	// check.FetchMembers, read-only (no trust matrix, no metrics).
	Members func(ctx context.Context, workload *rest.Config) (*check.Snapshot, error)
	// Known receives the workload kubeconfig's credentials, so that no output carries them.
	Known *redact.Known
}

// Errors Read returns for a cluster it cannot read as a whole: errors.Is tells them apart.
var (
	ErrNotFound    = errors.New("not found on the management cluster")
	ErrUnsupported = errors.New("not a KubeadmControlPlane: preflight reads kubeadm control planes")
)

// The resources and labels are Cluster API's, as pkg/clusterapi names them.
const clonedFromName = "cluster.x-k8s.io/cloned-from-name"

// Read reads cluster Namespace/Name into the current side of a preflight.
func Read(ctx context.Context, c Config) (*input.Set, error) {
	if err := c.complete(); err != nil {
		return nil, err
	}
	r := &reader{c: c, v: clusterapi.NewVersioned(c.Client, c.Mapper)}
	objs, err := r.controlPlane(ctx)
	if err != nil {
		return nil, err
	}
	objs = append(objs, r.machines(ctx)...)
	objs = append(objs, r.list(ctx, "KubeadmConfigs", r.capi(clusterapi.KubeadmConfigResource), c.Namespace, clusterapi.ClusterNameLabel+"="+c.Name)...)
	sec, absent := r.saSecret(ctx)
	if sec != nil {
		objs = append(objs, sec)
	}
	if r.infra != nil {
		if o := r.ref(ctx, r.infra); o != nil {
			objs = append(objs, o)
		}
	}
	objs = append(objs, r.list(ctx, "clusterctl Providers", r.plain(clusterapi.ProviderResource), metav1.NamespaceAll, "")...)
	// What decides an in-place update (v1.12 on): the runtime extensions and KubeadmControlPlane's
	// manager Deployment, whose --feature-gates say whether InPlaceUpdates is on.
	objs = append(objs, r.list(ctx, "ExtensionConfigs", r.plain(clusterapi.ExtensionConfigResource), metav1.NamespaceAll, "")...)
	objs = append(objs, r.list(ctx, "KubeadmControlPlane's manager Deployment", r.plain(clusterapi.DeploymentResource), metav1.NamespaceAll,
		input.ProviderLabel+"=control-plane-kubeadm")...)
	s := &input.Set{}
	if err := s.AddObjects("cluster "+c.Namespace+"/"+c.Name, objs...); err != nil {
		return nil, err
	}
	s.Served = r.served(ctx)
	s.Notes = r.notes
	if absent {
		s.Absent = append(s.Absent, "Secret/"+c.Name+"-sa")
	}
	return s, nil
}

func (c *Config) complete() error {
	if c.Name == "" {
		return errors.New("live: no cluster name")
	}
	if c.Namespace == "" {
		c.Namespace = metav1.NamespaceDefault
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.Members == nil {
		c.Members = func(ctx context.Context, rc *rest.Config) (*check.Snapshot, error) {
			return check.FetchMembers(ctx, check.MembersConfig{Config: check.Config{REST: rc, Timeout: c.Timeout},
				SkipMetrics: true, FreshConnections: true, ReadOnly: true})
		}
	}
	if c.Mgmt == nil {
		if c.Client == nil {
			return errors.New("live: no management cluster configuration")
		}
		return nil
	}
	if c.Client == nil {
		dc, err := dynamic.NewForConfig(c.Mgmt)
		if err != nil {
			return fmt.Errorf("client for %s: %w", c.Mgmt.Host, err)
		}
		c.Client = dc
	}
	if c.Mapper == nil {
		disc, err := discovery.NewDiscoveryClientForConfig(c.Mgmt)
		if err != nil {
			return fmt.Errorf("discovery client for %s: %w", c.Mgmt.Host, err)
		}
		c.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	}
	return nil
}

// reader is one Read: the config, the references found on the way and the notes.
type reader struct {
	c     Config
	v     *clusterapi.Versioned // Cluster API's own kinds, at v1beta2 where it is served
	infra *ref
	notes []string
}

// ref is an object reference of a Cluster or Machine: v1beta1 names the apiVersion, v1beta2
// the apiGroup (cluster-api@v1.14.0 api/core/v1beta2 ContractVersionedObjectReference).
type ref struct {
	apiVersion, apiGroup, kind, namespace, name string
}

func refAt(u *unstructured.Unstructured, fields ...string) *ref {
	m, ok, _ := unstructured.NestedStringMap(u.Object, fields...)
	if !ok || m["kind"] == "" || m["name"] == "" {
		return nil
	}
	ns := m["namespace"]
	if ns == "" {
		ns = u.GetNamespace()
	}
	x := &ref{apiVersion: m["apiVersion"], apiGroup: m["apiGroup"], kind: m["kind"], namespace: ns, name: m["name"]}
	if g, _, ok := strings.Cut(x.apiVersion, "/"); ok && x.apiGroup == "" {
		x.apiGroup = g
	}
	return x
}

func (x *ref) String() string { return x.kind + " " + x.namespace + "/" + x.name }

func (r *reader) note(format string, args ...any) {
	r.notes = append(r.notes, limits.Clean(fmt.Errorf(format, args...)).Error())
}

// controlPlane gets the Cluster and its KubeadmControlPlane: without them there is nothing to
// predict, so their errors are Read's.
func (r *reader) controlPlane(ctx context.Context) ([]*unstructured.Unstructured, error) {
	name := r.c.Namespace + "/" + r.c.Name
	cl, err := r.v.Get(ctx, clusterapi.ClusterResource.GroupResource(), r.c.Namespace, r.c.Name)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("cluster %s %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read cluster %s: %w", name, err)
	}
	r.infra = refAt(cl, "spec", "infrastructureRef")
	cp := refAt(cl, "spec", "controlPlaneRef")
	switch {
	case cp == nil:
		return nil, fmt.Errorf("cluster %s has no controlPlaneRef: %w", name, ErrUnsupported)
	case cp.kind != "KubeadmControlPlane" || cp.apiGroup != "" && cp.apiGroup != clusterapi.KubeadmControlPlaneResource.Group:
		return nil, fmt.Errorf("cluster %s: control plane %s: %w", name, cp, ErrUnsupported)
	}
	kcp, err := r.v.Get(ctx, clusterapi.KubeadmControlPlaneResource.GroupResource(), cp.namespace, cp.name)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("cluster %s: %s %w", name, cp, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %s: read %s: %w", name, cp, err)
	}
	return []*unstructured.Unstructured{cl, kcp}, nil
}

// errNoVersion is a v1beta2 reference (a group, no version) read without discovery.
var errNoVersion = errors.New("its apiGroup names no version and there is no discovery to find one")

// resource is the resource of x's kind: at its apiVersion (v1beta1), else at the version
// discovery prefers for its apiGroup (v1beta2; Cluster API looks the version up in the CRD's
// contract labels, which name the versions the CRD serves).
func (r *reader) resource(x *ref) (schema.GroupVersionResource, error) {
	if x.apiVersion == "" && x.apiGroup != "" {
		if r.c.Mapper == nil {
			return schema.GroupVersionResource{}, errNoVersion
		}
		m, err := r.c.Mapper.RESTMapping(schema.GroupKind{Group: x.apiGroup, Kind: x.kind})
		if err != nil {
			return schema.GroupVersionResource{}, err
		}
		return m.Resource, nil
	}
	gv, err := schema.ParseGroupVersion(x.apiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	if r.c.Mapper == nil {
		return gv.WithResource(strings.ToLower(x.kind) + "s"), nil
	}
	m, err := r.c.Mapper.RESTMapping(gv.WithKind(x.kind).GroupKind(), gv.Version)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return m.Resource, nil
}

// ref gets the object x names, or notes why not.
func (r *reader) ref(ctx context.Context, x *ref) *unstructured.Unstructured {
	gvr, err := r.resource(x)
	if err == nil {
		var o *unstructured.Unstructured
		if o, err = r.c.Client.Resource(gvr).Namespace(x.namespace).Get(ctx, x.name, metav1.GetOptions{}); err == nil {
			return o
		}
	}
	r.note("%s not read: %w", x, err)
	return nil
}

// lister lists one resource in a namespace.
type lister func(ctx context.Context, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)

// capi lists one of Cluster API's own resources at the version the management cluster serves.
func (r *reader) capi(gvr schema.GroupVersionResource) lister {
	return func(ctx context.Context, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		return r.v.List(ctx, gvr.GroupResource(), ns, opts)
	}
}

// plain lists gvr at its own version.
func (r *reader) plain(gvr schema.GroupVersionResource) lister {
	return func(ctx context.Context, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		return r.c.Client.Resource(gvr).Namespace(ns).List(ctx, opts)
	}
}

// list lists what the predictions read of one resource, or notes why not. A resource the
// management cluster does not serve (no clusterctl inventory) is an empty list.
func (r *reader) list(ctx context.Context, what string, ls lister, ns, selector string) []*unstructured.Unstructured {
	l, err := ls(ctx, ns, metav1.ListOptions{LabelSelector: selector})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		r.note("%s not read: %w", what, err)
		return nil
	}
	out := make([]*unstructured.Unstructured, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out
}

// machines lists the cluster's Machines. A control-plane Machine takes the template its
// provider machine was cloned from (an annotation Cluster API puts on the provider machine),
// which a roll compares with the KubeadmControlPlane's.
func (r *reader) machines(ctx context.Context) []*unstructured.Unstructured {
	ms := r.list(ctx, "Machines", r.capi(clusterapi.MachineResource), r.c.Namespace, clusterapi.ClusterNameLabel+"="+r.c.Name)
	for _, m := range ms {
		if _, cp := m.GetLabels()[clusterapi.ControlPlaneLabel]; !cp || m.GetAnnotations()[clonedFromName] != "" {
			continue
		}
		x := refAt(m, "spec", "infrastructureRef")
		if x == nil {
			continue
		}
		if im := r.ref(ctx, x); im != nil && im.GetAnnotations()[clonedFromName] != "" {
			a := m.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a[clonedFromName] = im.GetAnnotations()[clonedFromName]
			m.SetAnnotations(a)
		}
	}
	return ms
}
