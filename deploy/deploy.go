// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package deploy carries the manifests the binary prints, so that an archive without the
// repository still has them (credwatch check --print-rbac).
package deploy

import (
	_ "embed"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

//go:embed clusterrole.yaml
var clusterRole []byte

// ClusterRole is deploy/clusterrole.yaml: the least-privilege RBAC of credwatch check.
func ClusterRole() []byte { return slices.Clone(clusterRole) }

//go:embed labwatcher.yaml
var labWatcher []byte

// LabWatcherNamespace is the namespace deploy/labwatcher.yaml is rendered for.
const LabWatcherNamespace = "credwatch"

// LabEndpointHost and LabEndpointPort stand for the cluster's endpoint in deploy/labwatcher.yaml.
const (
	LabEndpointHost = "lab-endpoint.invalid"
	LabEndpointPort = "lab-endpoint-port"
)

// LabWatcher returns the objects of deploy/labwatcher.yaml — the Helm chart rendered with the
// Cluster API lab's values by hack/helm (TestLabWatcher) — with endpoint ("https://HOST:PORT")
// in the place of LabEndpointHost and LabEndpointPort.
func LabWatcher(endpoint string) ([]*unstructured.Unstructured, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Hostname() == "" || u.Port() == "" {
		return nil, fmt.Errorf("deploy/labwatcher.yaml: the endpoint %q is not https://HOST:PORT", endpoint)
	}
	r := strings.NewReplacer(LabEndpointHost, u.Hostname(), LabEndpointPort, u.Port())
	var out []*unstructured.Unstructured
	for i, doc := range strings.Split(string(labWatcher), "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, fmt.Errorf("deploy/labwatcher.yaml: document %d: %w", i, err)
		}
		if len(m) != 0 {
			out = append(out, &unstructured.Unstructured{Object: replaceStrings(m, r).(map[string]any)})
		}
	}
	return out, nil
}

// replaceStrings replaces in every string of v, a decoded YAML document, so that a port stays
// the string an EnvVar's value must be.
func replaceStrings(v any, r *strings.Replacer) any {
	switch v := v.(type) {
	case string:
		return r.Replace(v)
	case map[string]any:
		for k, e := range v {
			v[k] = replaceStrings(e, r)
		}
	case []any:
		for i, e := range v {
			v[i] = replaceStrings(e, r)
		}
	}
	return v
}
