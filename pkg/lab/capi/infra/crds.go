// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package infra

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

//go:embed crds/*.yaml
var crdFiles embed.FS

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Resources of the provider's kinds.
var (
	LabClusters         = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "labclusters"}
	LabMachines         = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "labmachines"}
	LabMachineTemplates = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "labmachinetemplates"}
)

// CRDs returns the provider's CustomResourceDefinitions.
func CRDs() ([]*unstructured.Unstructured, error) {
	names, err := fs.Glob(crdFiles, "crds/*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, n := range names {
		data, err := crdFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return nil, fmt.Errorf("CRD %s: %w", path.Base(n), err)
		}
		out = append(out, u)
	}
	return out, nil
}

// InstallCRDs creates (or updates) the CRDs and waits until each is established.
func InstallCRDs(ctx context.Context, c dynamic.Interface) error {
	crds, err := CRDs()
	if err != nil {
		return err
	}
	api := c.Resource(crdResource)
	for _, crd := range crds {
		_, err := api.Create(ctx, crd, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			cur, gerr := api.Get(ctx, crd.GetName(), metav1.GetOptions{})
			if gerr != nil {
				return fmt.Errorf("get CRD %s: %w", crd.GetName(), gerr)
			}
			crd.SetResourceVersion(cur.GetResourceVersion())
			_, err = api.Update(ctx, crd, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("install CRD %s: %w", crd.GetName(), err)
		}
	}
	for _, crd := range crds {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			cur, err := api.Get(ctx, crd.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(cur.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", crd.GetName(), err)
		}
	}
	return nil
}
