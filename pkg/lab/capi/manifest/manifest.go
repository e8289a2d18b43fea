// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package manifest installs CustomResourceDefinitions in a lab: server-side applied, then
// waited for until the apiserver serves them (Established). Cluster API's CRDs (package capi)
// and the lab provider's (package infra) go through it.
package manifest

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// FieldManager owns what the lab applies.
const FieldManager = "credwatch-lab"

// CRDResource is the resource of CustomResourceDefinitions.
func CRDResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
}

// ApplyCRDs server-side applies crds (forcing conflicts: the lab owns them) and waits, up to
// wait, until every one is Established.
func ApplyCRDs(ctx context.Context, dyn dynamic.Interface, crds []*unstructured.Unstructured, wait time.Duration) error {
	r := dyn.Resource(CRDResource())
	for _, c := range crds {
		if _, err := r.Apply(ctx, c.GetName(), c, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return fmt.Errorf("apply CRD %s: %w", c.GetName(), err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for _, c := range crds {
		for {
			got, err := r.Get(wctx, c.GetName(), metav1.GetOptions{})
			if err == nil && Established(got) {
				break
			}
			select {
			case <-wctx.Done():
				return fmt.Errorf("CRD %s not established within %s (last error: %v)", c.GetName(), wait, err)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// Established reports whether a CRD's Established condition is True.
func Established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
