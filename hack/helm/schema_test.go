// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package helm

import (
	"fmt"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// schemas validates rendered objects offline, as kubeconform does, against the schema of every
// built-in kind that client-go carries: the structural schema kube-apiserver derives from its
// OpenAPI document for server-side apply (unknown fields, wrong types, duplicate keys of
// associative lists). The prometheus-operator kinds are decoded strictly into the operator's own
// API types, the ones its CRDs are generated from. A kind neither knows fails (kubeconform
// -strict, without -ignore-missing-schemas). Required fields are not in these schemas: the lab
// test's server-side dry-run (TestIntegrationChartDryRun) checks them on a real apiserver.
type schemas struct {
	builtin managedfields.TypeConverter
}

func newSchemas() schemas {
	return schemas{builtin: applyconfigurations.NewTypeConverter(scheme.Scheme)}
}

func (s schemas) validate(o *unstructured.Unstructured) error {
	gvk := o.GroupVersionKind()
	if gvk.Group == monitoringv1.SchemeGroupVersion.Group {
		var into any
		switch gvk {
		case monitoringv1.SchemeGroupVersion.WithKind(monitoringv1.ServiceMonitorsKind):
			into = &monitoringv1.ServiceMonitor{}
		case monitoringv1.SchemeGroupVersion.WithKind(monitoringv1.PrometheusRuleKind):
			into = &monitoringv1.PrometheusRule{}
		default:
			return fmt.Errorf("%s: no schema", gvk)
		}
		// The operator's types are its CRDs' schema; strict JSON decoding rejects unknown fields
		// and wrong types (the unstructured converter accepts a string where an int belongs).
		raw, err := yaml.Marshal(o.Object)
		if err != nil {
			return err
		}
		return yaml.UnmarshalStrict(raw, into)
	}
	_, err := s.builtin.ObjectToTyped(o)
	return err
}

// TestManifestSchemas: every object the chart renders, with its optional objects off and on and
// its names overridden, is valid against the Kubernetes schemas; and the check is not vacuous.
func TestManifestSchemas(t *testing.T) {
	t.Parallel()
	s := newSchemas()
	for name, vals := range map[string]map[string]any{
		"defaults": nil,
		"everything on": {"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "kube-prometheus"}},
			"prometheusRule": map[string]any{"enabled": true}},
		"no pod logs":      {"watch": map[string]any{"podLogs": false}},
		"fullnameOverride": {"fullnameOverride": "auth-watcher", "nameOverride": "cw"},
	} {
		objs := render(t, "credwatch", vals)
		if len(objs) == 0 {
			t.Fatalf("%s: nothing rendered", name)
		}
		for _, o := range objs {
			if err := s.validate(o); err != nil {
				t.Errorf("%s: %s %s: %v", name, o.GetKind(), o.GetName(), err)
			}
		}
	}

	// Broken copies of rendered objects must fail.
	objs := render(t, "credwatch", map[string]any{"serviceMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true}})
	breaks := map[string]func(*unstructured.Unstructured) bool{
		"unknown container field": func(o *unstructured.Unstructured) bool {
			return o.GetKind() == "Deployment" && unstructured.SetNestedField(o.Object, "yes", "spec", "template", "spec", "containers0") == nil
		},
		"replicas a string": func(o *unstructured.Unstructured) bool {
			return o.GetKind() == "Deployment" && unstructured.SetNestedField(o.Object, "one", "spec", "replicas") == nil
		},
		"unknown rule field": func(o *unstructured.Unstructured) bool {
			return o.GetKind() == "ClusterRole" && unstructured.SetNestedField(o.Object, []any{map[string]any{"verbz": []any{"get"}}}, "rules") == nil
		},
		"ServiceMonitor endpoint typo": func(o *unstructured.Unstructured) bool {
			return o.GetKind() == "ServiceMonitor" && unstructured.SetNestedField(o.Object, []any{map[string]any{"prot": "http"}}, "spec", "endpoints") == nil
		},
		"PrometheusRule field typo": func(o *unstructured.Unstructured) bool {
			return o.GetKind() == "PrometheusRule" &&
				unstructured.SetNestedField(o.Object, []any{map[string]any{"name": "g", "rules": []any{map[string]any{"alert": "A", "expr": "1", "annotation": map[string]any{}}}}}, "spec", "groups") == nil
		},
		"unknown kind": func(o *unstructured.Unstructured) bool {
			if o.GetKind() != "Service" {
				return false
			}
			o.SetKind("Servise")
			return true
		},
	}
	for name, brk := range breaks {
		broke := false
		for _, o := range objs {
			c := o.DeepCopy()
			if !brk(c) {
				continue
			}
			broke = true
			err := s.validate(c)
			if err == nil {
				t.Errorf("%s: %s %s validated", name, o.GetKind(), o.GetName())
			}
			t.Logf("%s: %v", name, err)
		}
		if !broke {
			t.Errorf("%s: no rendered object to break", name)
		}
	}
}
