// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package deploy

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestLabWatcher: the endpoint lands in the watcher's environment as strings (an EnvVar's value
// is a string: a bare 6443 is refused by the apiserver), and a bad endpoint is an error.
func TestLabWatcher(t *testing.T) {
	objs, err := LabWatcher("https://10.200.1.1:6443")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]any{}
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range cs {
			es, _, _ := unstructured.NestedSlice(c.(map[string]any), "env")
			for _, e := range es {
				em := e.(map[string]any)
				env[em["name"].(string)] = em["value"]
			}
		}
	}
	if env["KUBERNETES_SERVICE_HOST"] != "10.200.1.1" || env["KUBERNETES_SERVICE_PORT"] != "6443" {
		t.Errorf("the watcher's environment: %#v", env)
	}
	for _, bad := range []string{"", "10.200.1.1", "https://10.200.1.1", "://x"} {
		if _, err := LabWatcher(bad); err == nil {
			t.Errorf("LabWatcher(%q): no error", bad)
		}
	}
}
