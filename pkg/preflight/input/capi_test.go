// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package input

import (
	"reflect"
	"strings"
	"testing"
)

// TestCAPIVersions: each Cluster API kind preflight reads gives the same Set written as v1beta1
// and as v1beta2 (cluster-api@v1.14.0 api/core/v1beta2, api/controlplane/kubeadm/v1beta2,
// api/bootstrap/kubeadm/v1beta2); a version preflight does not know is refused.
func TestCAPIVersions(t *testing.T) {
	tests := []struct {
		kind, v1beta1, v1beta2 string
	}{
		{"Cluster",
			`{apiVersion: cluster.x-k8s.io/v1beta1, kind: Cluster, metadata: {name: w1}, spec: {clusterNetwork: {serviceDomain: corp.local},
				controlPlaneRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane, name: w1},
				infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: VSphereCluster, name: w1}}}`,
			`{apiVersion: cluster.x-k8s.io/v1beta2, kind: Cluster, metadata: {name: w1}, spec: {clusterNetwork: {serviceDomain: corp.local},
				controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: KubeadmControlPlane, name: w1},
				infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: VSphereCluster, name: w1}}}`},
		{"KubeadmControlPlane",
			`{apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlane, metadata: {name: w1}, spec: {replicas: 3, version: v1.33.4,
				rolloutAfter: "2026-12-01T00:00:00Z", rolloutStrategy: {rollingUpdate: {maxSurge: 0}},
				machineTemplate: {metadata: {labels: {a: b}}, infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: VSphereMachineTemplate, name: w1-cp-v1}},
				kubeadmConfigSpec: {clusterConfiguration: {apiServer: {timeoutForControlPlane: 20m, extraArgs: {service-account-issuer: "https://a", api-audiences: x}}},
					joinConfiguration: {discovery: {timeout: 5m}, nodeRegistration: {kubeletExtraArgs: {cloud-provider: external}}}}}}`,
			`{apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlane, metadata: {name: w1}, spec: {replicas: 3, version: v1.33.4,
				rollout: {after: "2026-12-01T00:00:00Z", strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0}}},
				machineTemplate: {metadata: {labels: {a: b}}, spec: {infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: VSphereMachineTemplate, name: w1-cp-v1}}},
				kubeadmConfigSpec: {clusterConfiguration: {apiServer: {extraArgs: [{name: api-audiences, value: x}, {name: service-account-issuer, value: "https://a"}]}},
					initConfiguration: {timeouts: {controlPlaneComponentHealthCheckSeconds: 1200}},
					joinConfiguration: {timeouts: {controlPlaneComponentHealthCheckSeconds: 1200, tlsBootstrapSeconds: 300},
						nodeRegistration: {kubeletExtraArgs: [{name: cloud-provider, value: external}]}}}}}`},
		{"KubeadmConfig",
			`{apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfig, metadata: {name: w1-a}, spec: {clusterConfiguration: {apiServer: {extraArgs: {service-account-issuer: "https://a"}}}, files: [{path: /a, content: b}]}}`,
			`{apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfig, metadata: {name: w1-a}, spec: {clusterConfiguration: {apiServer: {extraArgs: [{name: service-account-issuer, value: "https://a"}]}}, files: [{path: /a, content: b}]}}`},
		{"KubeadmConfigTemplate",
			`{apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfigTemplate, metadata: {name: w1-md}, spec: {template: {spec: {preKubeadmCommands: ["true"]}}}}`,
			`{apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate, metadata: {name: w1-md}, spec: {template: {spec: {preKubeadmCommands: ["true"]}}}}`},
		{"Machine",
			`{apiVersion: cluster.x-k8s.io/v1beta1, kind: Machine, metadata: {name: w1-a, labels: {cluster.x-k8s.io/control-plane: ""}, annotations: {cluster.x-k8s.io/cloned-from-name: w1-cp-v1}},
				spec: {version: v1.33.4, bootstrap: {configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfig, name: w1-a}}}}`,
			`{apiVersion: cluster.x-k8s.io/v1beta2, kind: Machine, metadata: {name: w1-a, labels: {cluster.x-k8s.io/control-plane: ""}, annotations: {cluster.x-k8s.io/cloned-from-name: w1-cp-v1}},
				spec: {version: v1.33.4, bootstrap: {configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfig, name: w1-a}}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			var sets [2]*Set
			for i, doc := range []string{tc.v1beta1, tc.v1beta2} {
				sets[i] = &Set{}
				if err := sets[i].Add("w1.yaml", []byte(doc)); err != nil {
					t.Fatal(err)
				}
				if len(sets[i].Ignored) > 0 {
					t.Fatalf("ignored %v", sets[i].Ignored)
				}
				for j := range sets[i].KCPs {
					sets[i].KCPs[j].APIVersion = "" // the one field that says which version was read
				}
				for j := range sets[i].Clusters {
					c := &sets[i].Clusters[j]
					if c.ControlPlaneRef.Group() != "controlplane.cluster.x-k8s.io" || c.InfrastructureRef.Group() != "infrastructure.cluster.x-k8s.io" {
						t.Errorf("refs %+v", c)
					}
					c.ControlPlaneRef.APIVersion, c.ControlPlaneRef.APIGroup = "", ""
					c.InfrastructureRef.APIVersion, c.InfrastructureRef.APIGroup = "", ""
				}
			}
			if !reflect.DeepEqual(sets[0], sets[1]) {
				t.Errorf("v1beta1 %#v\nv1beta2 %#v", sets[0], sets[1])
			}
			if k := sets[1].KCPs; len(k) == 1 && (k[0].InfraTemplate != "w1-cp-v1" || k[0].MaxSurge != 0 || k[0].RolloutAfter == "") {
				t.Errorf("v1beta2 KubeadmControlPlane %+v", k[0])
			}
			bad := strings.Replace(tc.v1beta2, "/v1beta2,", "/v1alpha4,", 1)
			if err := (&Set{}).Add("w1.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "/v1alpha4\": preflight reads") {
				t.Errorf("v1alpha4: %v", err)
			}
		})
	}
}
