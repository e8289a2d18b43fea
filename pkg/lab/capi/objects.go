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

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
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
// manager need only this.
func (r Release) InstallCRDs(ctx context.Context, dyn dynamic.Interface, wait time.Duration) (int, error) {
	crds, err := readObjects(r.CRDs...)
	if err != nil {
		return 0, err
	}
	for _, crd := range crds {
		labelContract(crd)
	}
	return len(crds), manifest.ApplyCRDs(ctx, dyn, crds, wait)
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
// config/crd/kustomization.yaml's commonLabels: its v1beta1 serves the contract v1beta1).
// Without the label the core manager cannot resolve a reference to the kind ("cannot find any
// versions matching contract", e.g. the Cluster's controlPlaneRef to a KubeadmControlPlane).
func labelContract(crd object) {
	labels := crd.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[infra.ContractLabel] = "v1beta1"
	crd.SetLabels(labels)
}
