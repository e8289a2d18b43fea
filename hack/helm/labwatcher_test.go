// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package helm

import (
	"bytes"
	"os"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/deploy"
)

// labWatcherPath is the chart's rendering the Cluster API lab installs on a self-managed cluster
// (deploy.LabWatcher; the lab carries no Helm SDK).
const labWatcherPath = "../../deploy/labwatcher.yaml"

// labWatcherValues are the values of that rendering: the lab's own image (imported on every host,
// never pulled), the lab scenarios' 5 s interval, and the cluster's endpoint, since
// the lab runs no kube-proxy and the kubernetes Service's address leads nowhere: the endpoint
// goes in the in-cluster configuration's KUBERNETES_SERVICE_HOST and _PORT (watch.extraEnv), as
// deploy.LabEndpointHost and LabEndpointPort until the lab puts the cluster's in their place.
func labWatcherValues() map[string]any {
	return map[string]any{
		"image": map[string]any{"repository": "local/credwatch", "tag": "lab", "pullPolicy": "Never"},
		"watch": map[string]any{"interval": "5s", "extraEnv": []any{
			map[string]any{"name": "KUBERNETES_SERVICE_HOST", "value": deploy.LabEndpointHost},
			map[string]any{"name": "KUBERNETES_SERVICE_PORT", "value": deploy.LabEndpointPort}}},
		"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/readyz", "port": "metrics"}, "periodSeconds": 1},
	}
}

// TestLabWatcher: deploy/labwatcher.yaml is the chart rendered with labWatcherValues in the
// namespace deploy.LabWatcherNamespace (go test ./hack/helm -run TestLabWatcher -args -update).
func TestLabWatcher(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("# The Helm chart deploy/helm/credwatch rendered for the Cluster API lab's self-managed cluster:\n" +
		"# written by go test ./hack/helm -run TestLabWatcher -args -update; do not edit.\n")
	for _, o := range render(t, deploy.LabWatcherNamespace, labWatcherValues()) {
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	if *update {
		if err := os.WriteFile(labWatcherPath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(labWatcherPath)
	if err != nil || !bytes.Equal(got, b.Bytes()) {
		t.Errorf("%s is not the chart's rendering (err %v): go test ./hack/helm -run TestLabWatcher -args -update", labWatcherPath, err)
	}
	objs, err := deploy.LabWatcher("https://192.0.2.10:6443")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatal("deploy.LabWatcher: no objects")
	}
}
