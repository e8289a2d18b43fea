// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package clusterapi

import (
	"context"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// The API versions of Cluster API's own groups (cluster.x-k8s.io, bootstrap. and controlplane.):
// v1beta2 since Cluster API v1.11, v1beta1 served beside it until v1.16 (cluster-api@v1.14.0
// CHANGELOG/v1.11.0.md, api/core/v1beta2).
const (
	V1Beta2 = "v1beta2"
	V1Beta1 = "v1beta1"
)

// Versioned reads Cluster API's own kinds at v1beta2, and at v1beta1 only where the management
// cluster does not serve v1beta2 (Cluster API ≤ v1.10). Both versions are views of one stored
// object, so what is read is the same either way; the parsers read both shapes.
type Versioned struct {
	Dyn dynamic.Interface
	// Mapper is the management cluster's discovery. Without it a group's version is found by
	// asking v1beta2 first and v1beta1 on a NotFound; a group not yet found tries first the
	// version another Cluster API group was found at (one management cluster runs one release).
	Mapper meta.RESTMapper

	mu     sync.Mutex
	served map[string]string // group → the version it was read at
}

// NewVersioned returns a Versioned reading through dyn; mapper may be nil.
func NewVersioned(dyn dynamic.Interface, mapper meta.RESTMapper) *Versioned {
	return &Versioned{Dyn: dyn, Mapper: mapper}
}

// Served is the version group was read at, "" before it was.
func (v *Versioned) Served(group string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.served[group]
}

func (v *Versioned) found(group, version string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.served == nil {
		v.served = map[string]string{}
	}
	v.served[group] = version
}

// versions are the versions to ask for gr, in order.
func (v *Versioned) versions(gr schema.GroupResource) []string {
	if s := v.Served(gr.Group); s != "" {
		return []string{s}
	}
	if v.Mapper != nil {
		if gvrs, err := v.Mapper.ResourcesFor(gr.WithVersion("")); err == nil {
			var served []string
			for _, r := range gvrs {
				served = append(served, r.Version)
			}
			for _, want := range []string{V1Beta2, V1Beta1} {
				if slices.Contains(served, want) {
					return []string{want}
				}
			}
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, s := range v.served {
		if s == V1Beta1 {
			return []string{V1Beta1, V1Beta2}
		}
	}
	return []string{V1Beta2, V1Beta1}
}

// Get gets one object of gr.
func (v *Versioned) Get(ctx context.Context, gr schema.GroupResource, namespace, name string) (*unstructured.Unstructured, error) {
	return atServed(v, gr, func(ver string) (*unstructured.Unstructured, error) {
		return v.Dyn.Resource(gr.WithVersion(ver)).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	})
}

// List lists gr. A version the server does not serve answers NotFound (a served one never
// does); NotFound at every version is returned as it is.
func (v *Versioned) List(ctx context.Context, gr schema.GroupResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return atServed(v, gr, func(ver string) (*unstructured.UnstructuredList, error) {
		return v.Dyn.Resource(gr.WithVersion(ver)).Namespace(namespace).List(ctx, opts)
	})
}

// atServed calls read at each version of gr in turn until one answers other than NotFound, and
// remembers the version that answered.
func atServed[T any](v *Versioned, gr schema.GroupResource, read func(version string) (T, error)) (T, error) {
	var out T
	var err error
	for _, ver := range v.versions(gr) {
		if out, err = read(ver); err == nil {
			v.found(gr.Group, ver)
			return out, nil
		}
		if !apierrors.IsNotFound(err) {
			return out, err
		}
	}
	return out, err
}
