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

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/pkg/lab/capi/manifest"
)

//go:embed crds/*.yaml
var crdFiles embed.FS

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

// InstallCRDs applies the CRDs and waits until each is established.
func InstallCRDs(ctx context.Context, c dynamic.Interface) error {
	crds, err := CRDs()
	if err != nil {
		return err
	}
	return manifest.ApplyCRDs(ctx, c, crds, 30*time.Second)
}
