// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capi

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// webhookManifest has the shape of kubebuilder's config/webhook/manifests.yaml in Cluster API v1.8.
const webhookManifest = `---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /mutate-cluster-x-k8s-io-v1beta1-cluster
  failurePolicy: Fail
  name: default.cluster.cluster.x-k8s.io
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /validate-cluster-x-k8s-io-v1beta1-cluster
  name: validation.cluster.cluster.x-k8s.io
- clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /validate-cluster-x-k8s-io-v1beta1-machine
  name: validation.machine.cluster.x-k8s.io
`

func TestWebhookConfiguration(t *testing.T) {
	p := filepath.Join(t.TempDir(), "hooks.yaml")
	if err := os.WriteFile(p, []byte(webhookManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	objs, err := readObjects(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("%d objects, want 2 (the empty first document skipped)", len(objs))
	}
	ca := []byte("-----BEGIN CERTIFICATE-----\nlab\n-----END CERTIFICATE-----\n")
	wantURLs := [][]string{
		{"https://10.200.3.1:9443/mutate-cluster-x-k8s-io-v1beta1-cluster"},
		{"https://10.200.3.1:9443/validate-cluster-x-k8s-io-v1beta1-cluster", "https://10.200.3.1:9443/validate-cluster-x-k8s-io-v1beta1-machine"},
	}
	for i, in := range objs {
		got, err := webhookConfiguration(in, CoreManager, "https://10.200.3.1:9443", ca)
		if err != nil {
			t.Fatal(err)
		}
		if want := CoreManager + "-" + in.GetName(); got.GetName() != want {
			t.Errorf("name %q, want %q", got.GetName(), want)
		}
		hooks, _, _ := unstructured.NestedSlice(got.Object, "webhooks")
		for j, h := range hooks {
			cc := h.(map[string]any)["clientConfig"].(map[string]any)
			if _, ok := cc["service"]; ok {
				t.Errorf("%s webhook %d keeps its service: %v", got.GetName(), j, cc)
			}
			if cc["url"] != wantURLs[i][j] {
				t.Errorf("%s webhook %d url %v, want %s", got.GetName(), j, cc["url"], wantURLs[i][j])
			}
			if b, _ := base64.StdEncoding.DecodeString(cc["caBundle"].(string)); string(b) != string(ca) {
				t.Errorf("%s webhook %d caBundle %q, want the lab CA", got.GetName(), j, b)
			}
		}
		// The manifest as read stays as it was.
		if s := fmt.Sprint(in.Object["webhooks"]); !strings.Contains(s, "webhook-service") {
			t.Errorf("the input was modified: %s", s)
		}
	}
}

func TestWebhookConfigurationRejects(t *testing.T) {
	for _, tc := range []struct{ name, kind, hooks, want string }{
		{"a CRD", "CustomResourceDefinition", "", "not a webhook configuration"},
		{"no webhooks", "ValidatingWebhookConfiguration", "", "no webhooks"},
		{"a url already", "MutatingWebhookConfiguration", "url", "no clientConfig.service.path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &unstructured.Unstructured{Object: map[string]any{"kind": tc.kind, "metadata": map[string]any{"name": "x"}}}
			if tc.hooks == "url" {
				in.Object["webhooks"] = []any{map[string]any{"name": "h", "clientConfig": map[string]any{"url": "https://x"}}}
			}
			if _, err := webhookConfiguration(in, CoreManager, "https://127.0.0.1:9443", nil); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestConversionAndContract: a CRD serving v1beta1 and v1beta2 (Cluster API v1.11 on) converts
// through the manager that owns its group and is labelled for both contracts, as clusterctl
// installs it; a CRD serving one version (v1.8's) is left without a webhook.
func TestConversionAndContract(t *testing.T) {
	crd := func(group string, served ...string) object {
		var vs []any
		for _, v := range []string{"v1alpha4", "v1beta1", "v1beta2"} {
			vs = append(vs, map[string]any{"name": v, "served": strings.Contains(strings.Join(served, ","), v)})
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "things." + group}, "spec": map[string]any{"group": group, "versions": vs},
		}}
	}
	conv := &Conversion{CA: []byte("ca"), Base: map[string]string{
		CoreManager: "https://10.0.0.1:9443", BootstrapManager: "https://10.0.0.1:9444", ControlPlaneManager: "https://10.0.0.1:9445"}}
	for _, tc := range []struct {
		group  string
		served []string
		url    string
		labels string
	}{
		{"cluster.x-k8s.io", []string{"v1beta1", "v1beta2"}, "https://10.0.0.1:9443/convert", "cluster.x-k8s.io/provider=cluster-api,cluster.x-k8s.io/v1beta1=v1beta1,cluster.x-k8s.io/v1beta2=v1beta2,clusterctl.cluster.x-k8s.io="},
		{"bootstrap.cluster.x-k8s.io", []string{"v1beta1", "v1beta2"}, "https://10.0.0.1:9444/convert", "cluster.x-k8s.io/provider=bootstrap-kubeadm,cluster.x-k8s.io/v1beta1=v1beta1,cluster.x-k8s.io/v1beta2=v1beta2,clusterctl.cluster.x-k8s.io="},
		{"controlplane.cluster.x-k8s.io", []string{"v1beta1", "v1beta2"}, "https://10.0.0.1:9445/convert", "cluster.x-k8s.io/provider=control-plane-kubeadm,cluster.x-k8s.io/v1beta1=v1beta1,cluster.x-k8s.io/v1beta2=v1beta2,clusterctl.cluster.x-k8s.io="},
		{"cluster.x-k8s.io", []string{"v1beta1"}, "", "cluster.x-k8s.io/provider=cluster-api,cluster.x-k8s.io/v1beta1=v1beta1,clusterctl.cluster.x-k8s.io="},
	} {
		c := crd(tc.group, tc.served...)
		labelContract(c)
		if err := conv.apply(c); err != nil {
			t.Fatal(err)
		}
		url, _, _ := unstructured.NestedString(c.Object, "spec", "conversion", "webhook", "clientConfig", "url")
		if url != tc.url {
			t.Errorf("%s %v: conversion url %q, want %q", tc.group, tc.served, url, tc.url)
		}
		if tc.url != "" {
			ca, _, _ := unstructured.NestedString(c.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
			if ca != base64.StdEncoding.EncodeToString([]byte("ca")) {
				t.Errorf("%s: caBundle %q", tc.group, ca)
			}
		}
		var got []string
		for k, v := range c.GetLabels() {
			got = append(got, k+"="+v)
		}
		slices.Sort(got)
		if strings.Join(got, ",") != tc.labels {
			t.Errorf("%s %v: labels %v, want %s", tc.group, tc.served, got, tc.labels)
		}
	}
	if err := (&Conversion{Base: map[string]string{}}).apply(crd("cluster.x-k8s.io", "v1beta1", "v1beta2")); err == nil {
		t.Error("a two-version CRD without its manager's webhook server: no error")
	}
}
