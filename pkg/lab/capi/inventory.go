// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capi

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/credwatch/credwatch/pkg/lab/capi/manifest"
)

// InventoryAPIVersion is the API version of clusterctl's Provider objects.
const InventoryAPIVersion = "clusterctl.cluster.x-k8s.io/v1alpha3"

// inventoryProvider is one entry of the inventory, named and placed as clusterctl init places
// it: <type prefix>-<provider name> in the provider's namespace.
type inventoryProvider struct {
	namespace, name, typ, providerName string
}

// inventoryProviders are the three providers the lab runs, as clusterctl init names them.
var inventoryProviders = []inventoryProvider{
	{"capi-system", "cluster-api", "CoreProvider", "cluster-api"},
	{"capi-kubeadm-bootstrap-system", "bootstrap-kubeadm", "BootstrapProvider", "kubeadm"},
	{"capi-kubeadm-control-plane-system", "control-plane-kubeadm", "ControlPlaneProvider", "kubeadm"},
}

// providerOf is the inventory entry of manager (one of ManagerNames).
func providerOf(manager string) inventoryProvider {
	for i, m := range ManagerNames() {
		if m == manager {
			return inventoryProviders[i]
		}
	}
	return inventoryProviders[0]
}

// LabInfraProvider is the lab infrastructure provider's entry (package infra), at the version
// the lab gives it: clusterctl move checks that the target cluster has every provider the
// source has, infrastructure included.
var LabInfraProvider = inventoryProvider{"capl-system", "infrastructure-lab", "InfrastructureProvider", "lab"}

// LabInfraNamespace is the lab infrastructure provider's namespace (its inventory entry's),
// where a self-managed cluster runs its Pod.
func LabInfraNamespace() string { return LabInfraProvider.namespace }

// LabInfraName is the lab infrastructure provider's inventory name, its Pods' ManagerPodLabel.
func LabInfraName() string { return LabInfraProvider.name }

// labInfraVersion is the lab provider's version in the inventory (its API is v1alpha1).
const labInfraVersion = "v0.1.0"

// inventoryObjects are the Provider objects for version, and the lab provider's.
func inventoryObjects(version string) []object {
	var out []object
	for _, p := range append(slices.Clone(inventoryProviders), LabInfraProvider) {
		v := version
		if p == LabInfraProvider {
			v = labInfraVersion
		}
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": InventoryAPIVersion, "kind": "Provider",
			"metadata": map[string]any{"name": p.name, "namespace": p.namespace, "labels": map[string]any{
				"clusterctl.cluster.x-k8s.io": "", "cluster.x-k8s.io/provider": p.name,
			}},
			"type": p.typ, "providerName": p.providerName, "version": v,
		}})
	}
	return out
}

// writeInventory installs clusterctl's Provider CRD and records the release's providers in it,
// as `clusterctl init` does on a real management cluster: tools that ask which Cluster API
// version rolls a cluster (credwatch preflight and check --capi-cluster among them) read it there.
func (m *Managers) writeInventory(ctx context.Context, wait time.Duration) error {
	crds, err := readObjects(m.Release.InventoryCRD)
	if err != nil {
		return err
	}
	if err := manifest.ApplyCRDs(ctx, m.api.dyn, crds, wait); err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "clusterctl.cluster.x-k8s.io", Version: "v1alpha3", Resource: "providers"}
	nsGVR := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	for _, p := range inventoryObjects(m.Release.Version) {
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": p.GetNamespace()}}}
		if _, err := m.api.dyn.Resource(nsGVR).Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("capi: create namespace %s for the clusterctl inventory: %w", p.GetNamespace(), err)
		}
		if _, err := m.api.dyn.Resource(gvr).Namespace(p.GetNamespace()).Apply(ctx, p.GetName(), p,
			metav1.ApplyOptions{FieldManager: manifest.FieldManager, Force: true}); err != nil {
			return fmt.Errorf("capi: record %s/%s in the clusterctl inventory: %w", p.GetNamespace(), p.GetName(), err)
		}
	}
	fmt.Fprintf(m.log, "capi: clusterctl inventory records %d providers at %s\n", len(inventoryProviders)+1, m.Release.Version)
	return nil
}
