// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capi

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/lab/capi/manifest"
)

// object is one Kubernetes object read from a manifest.
type object = *unstructured.Unstructured

// resources maps the kinds the lab applies from Cluster API's manifests to their resources.
func resources() map[string]schema.GroupVersionResource {
	return map[string]schema.GroupVersionResource{
		"CustomResourceDefinition":       manifest.CRDResource(),
		"MutatingWebhookConfiguration":   {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
		"ValidatingWebhookConfiguration": {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"},
	}
}

// api applies cluster-scoped manifests through a dynamic client.
type api struct{ dyn dynamic.Interface }

func newAPI(cfg *rest.Config) (*api, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("capi: dynamic client for the lab: %w", err)
	}
	return &api{dyn: dyn}, nil
}

func (a *api) resource(obj object) (dynamic.ResourceInterface, error) {
	gvr, ok := resources()[obj.GetKind()]
	if !ok {
		return nil, fmt.Errorf("capi: %s %s: not a kind the lab applies", obj.GetKind(), obj.GetName())
	}
	return a.dyn.Resource(gvr), nil
}

// apply server-side applies obj (forcing conflicts: the lab owns these objects).
func (a *api) apply(ctx context.Context, obj object) error {
	r, err := a.resource(obj)
	if err != nil {
		return err
	}
	if _, err := r.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: manifest.FieldManager, Force: true}); err != nil {
		return fmt.Errorf("capi: apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// delete deletes obj; one already gone is no error.
func (a *api) delete(ctx context.Context, obj object) error {
	r, err := a.resource(obj)
	if err != nil {
		return err
	}
	if err := r.Delete(ctx, obj.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("capi: delete %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// InstallCRDs applies the release's CRDs and waits, up to wait, until each is established; it
// returns how many there are. Start does it first; tests of the lab provider that run no
// manager need only this, and pass no Conversion.
func (r Release) InstallCRDs(ctx context.Context, dyn dynamic.Interface, wait time.Duration, conv *Conversion) (int, error) {
	crds, err := readObjects(r.CRDs...)
	if err != nil {
		return 0, err
	}
	for _, crd := range crds {
		labelContract(crd)
		if conv != nil {
			if err := conv.apply(crd); err != nil {
				return 0, err
			}
		}
	}
	return len(crds), manifest.ApplyCRDs(ctx, dyn, crds, wait)
}

// Conversion says where the managers serve /convert: a CRD that serves more than one version
// (v1beta1 and v1beta2 from v1.11 on) converts through the manager that owns its group, as
// each config/crd/patches/webhook_in_*.yaml of Cluster API configures it, with the lab's CA as
// the caBundle cert-manager would inject.
type Conversion struct {
	// Base maps a manager's name to its webhook server ("https://10.200.0.1:9443").
	Base map[string]string
	CA   []byte
}

// owner is the manager that serves a CRD group's conversion.
func owner(group string) string {
	switch group {
	case "bootstrap.cluster.x-k8s.io":
		return BootstrapManager
	case "controlplane.cluster.x-k8s.io":
		return ControlPlaneManager
	}
	return CoreManager
}

func (c *Conversion) apply(crd object) error {
	if len(servedVersions(crd)) < 2 {
		return nil
	}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	base, ok := c.Base[owner(group)]
	if !ok {
		return fmt.Errorf("capi: CRD %s serves %v but %s serves no webhooks", crd.GetName(), servedVersions(crd), owner(group))
	}
	return unstructured.SetNestedField(crd.Object, map[string]any{
		"strategy": "Webhook",
		"webhook": map[string]any{
			"conversionReviewVersions": []any{"v1"},
			"clientConfig":             map[string]any{"url": base + "/convert", "caBundle": base64.StdEncoding.EncodeToString(c.CA)},
		},
	}, "spec", "conversion")
}

// servedVersions are the names of a CRD's served versions, in its order.
func servedVersions(crd object) []string {
	vs, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var out []string
	for _, v := range vs {
		vm, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if served, _ := vm["served"].(bool); served {
			if name, ok := vm["name"].(string); ok {
				out = append(out, name)
			}
		}
	}
	return out
}

// readObjects reads every object of the YAML files (multi-document; empty documents skipped).
func readObjects(files ...string) ([]object, error) {
	var out []object
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, fmt.Errorf("capi: open manifest: %w", err)
		}
		d := yaml.NewYAMLOrJSONDecoder(fh, 64<<10)
		for {
			var m map[string]any
			err := d.Decode(&m)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				_ = fh.Close()
				return nil, fmt.Errorf("capi: read %s: %w", f, err)
			}
			if len(m) > 0 {
				out = append(out, &unstructured.Unstructured{Object: m})
			}
		}
		_ = fh.Close()
	}
	return out, nil
}

// webhookConfiguration rewrites one of a manager's webhook configurations (kubebuilder's output,
// every webhook calling the in-cluster webhook-service) for the lab: named after the manager (all
// three managers' manifests use the same two names, which kustomize prefixes), every
// clientConfig calling base+path with caBundle instead of the Service.
func webhookConfiguration(in object, manager, base string, caPEM []byte) (object, error) {
	if _, ok := resources()[in.GetKind()]; !ok || in.GetKind() == "CustomResourceDefinition" {
		return nil, fmt.Errorf("%s %s: not a webhook configuration", in.GetKind(), in.GetName())
	}
	obj := in.DeepCopy()
	obj.SetName(manager + "-" + in.GetName())
	obj.SetLabels(map[string]string{"app.kubernetes.io/managed-by": manifest.FieldManager, "app.kubernetes.io/component": manager})
	hooks, _, err := unstructured.NestedSlice(obj.Object, "webhooks")
	if err != nil || len(hooks) == 0 {
		return nil, fmt.Errorf("%s %s: no webhooks (%v)", in.GetKind(), in.GetName(), err)
	}
	for i, h := range hooks {
		hm, ok := h.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s %s: webhook %d is not an object", in.GetKind(), in.GetName(), i)
		}
		path, _, _ := unstructured.NestedString(hm, "clientConfig", "service", "path")
		if path == "" {
			return nil, fmt.Errorf("%s %s: webhook %v has no clientConfig.service.path", in.GetKind(), in.GetName(), hm["name"])
		}
		hm["clientConfig"] = map[string]any{"url": base + path, "caBundle": base64.StdEncoding.EncodeToString(caPEM)}
	}
	if err := unstructured.SetNestedSlice(obj.Object, hooks, "webhooks"); err != nil {
		return nil, fmt.Errorf("%s %s: %w", in.GetKind(), in.GetName(), err)
	}
	return obj, nil
}

// labelContract labels one of the release's CRDs as clusterctl does (each
// config/crd/kustomization.yaml's labels): every served API version of Cluster API's serves the
// contract of the same name (v1.8: cluster.x-k8s.io/v1beta1=v1beta1; v1.14 adds
// cluster.x-k8s.io/v1beta2=v1beta2). Without the label the core manager cannot resolve a
// reference to the kind ("cannot find any versions matching contract", e.g. the Cluster's
// controlPlaneRef to a KubeadmControlPlane).
func labelContract(crd object) {
	labels := crd.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	for _, v := range servedVersions(crd) {
		if v == "v1beta1" || v == "v1beta2" {
			labels["cluster.x-k8s.io/"+v] = v
		}
	}
	// clusterctl init labels every component with the clusterctl label and its provider's
	// name; clusterctl move finds the kinds to move by the first.
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	labels["clusterctl.cluster.x-k8s.io"] = ""
	labels["cluster.x-k8s.io/provider"] = providerOf(owner(group)).name
	crd.SetLabels(labels)
}
