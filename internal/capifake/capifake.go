// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package capifake is a management cluster for unit tests: client-go's fake dynamic client
// serving Cluster API's own groups at the given versions only, as Cluster API ≤ v1.10 serves
// v1beta1, v1.11 to v1.15 v1beta1 and v1beta2, and v1.16 v1beta2 alone. A version it does not
// serve answers NotFound, as the API server does; it converts nothing, so objects are found at
// the version they were created at.
package capifake

import (
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// kinds are Cluster API's kinds credwatch reads, by group.
func kinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{
		{Group: "cluster.x-k8s.io", Kind: "Cluster"},
		{Group: "cluster.x-k8s.io", Kind: "Machine"},
		{Group: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfig"},
		{Group: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane"},
	}
}

func resource(k schema.GroupVersionKind) schema.GroupVersionResource {
	r, _ := meta.UnsafeGuessKindToResource(k)
	return r
}

// Client serves objs, and Cluster API's groups at served only.
func Client(served []string, objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	lists := map[schema.GroupVersionResource]string{
		{Group: "clusterctl.cluster.x-k8s.io", Version: "v1alpha3", Resource: "providers"}:    "ProviderList",
		{Version: "v1", Resource: "secrets"}:                                                  "SecretList",
		{Group: "apps", Version: "v1", Resource: "deployments"}:                               "DeploymentList",
		{Group: "runtime.cluster.x-k8s.io", Version: "v1beta2", Resource: "extensionconfigs"}: "ExtensionConfigList",
	}
	groups := map[string]bool{}
	for _, k := range kinds() {
		groups[k.Group] = true
		for _, v := range []string{"v1beta1", "v1beta2"} {
			k.Version = v
			lists[resource(k)] = k.Kind + "List"
		}
	}
	c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, objs...)
	c.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		gvr := a.GetResource()
		if groups[gvr.Group] && !slices.Contains(served, gvr.Version) {
			return true, nil, apierrors.NewNotFound(gvr.GroupResource(), "")
		}
		return false, nil, nil
	})
	return c
}

// Mapper is the discovery of a management cluster serving Cluster API's groups at served, the
// first preferred, and the kinds of extra at their own versions.
func Mapper(served []string, extra ...schema.GroupVersionKind) meta.RESTMapper {
	var gvs []schema.GroupVersion
	for _, v := range served {
		for _, k := range kinds() {
			if gv := (schema.GroupVersion{Group: k.Group, Version: v}); !slices.Contains(gvs, gv) {
				gvs = append(gvs, gv)
			}
		}
	}
	for _, k := range extra {
		gvs = append(gvs, k.GroupVersion())
	}
	m := meta.NewDefaultRESTMapper(gvs)
	for _, v := range served {
		for _, k := range kinds() {
			k.Version = v
			m.Add(k, meta.RESTScopeNamespace)
		}
	}
	for _, k := range extra {
		m.Add(k, meta.RESTScopeNamespace)
	}
	return m
}
