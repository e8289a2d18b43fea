// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package input

import (
	"testing"
)

// fuzzKind fuzzes the parser of one kind: every input is a document of that kind with an
// arbitrary body. Whatever the body, parsing returns (a result or an error) and never panics.
func fuzzKind(f *testing.F, head string, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		s := &Set{}
		_ = s.Add("fuzz.yaml", []byte(head+body))
		_ = s.ClusterName()
	})
}

func FuzzDocuments(f *testing.F) {
	fuzzKind(f, "", "a: 1\n---\nb: 2\n", "--- \n# c\n---\nkind: X\n")
}

func FuzzKubeadmControlPlane(f *testing.F) {
	fuzzKind(f, "apiVersion: controlplane.cluster.x-k8s.io/v1beta1\nkind: KubeadmControlPlane\n",
		"spec:\n  replicas: 3\n  rolloutStrategy:\n    rollingUpdate:\n      maxSurge: 0\n  kubeadmConfigSpec:\n    clusterConfiguration:\n      apiServer:\n        extraArgs:\n          service-account-issuer: x\n",
		"spec:\n  kubeadmConfigSpec:\n    files:\n    - path: /a\n      encoding: base64\n      content: '!!'\n")
}

func FuzzKubeadmConfig(f *testing.F) {
	fuzzKind(f, "apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\nkind: KubeadmConfig\n", "spec:\n  preKubeadmCommands: [a]\n")
}

func FuzzKubeadmConfigTemplate(f *testing.F) {
	fuzzKind(f, "apiVersion: bootstrap.cluster.x-k8s.io/v1beta1\nkind: KubeadmConfigTemplate\n", "spec:\n  template:\n    spec: {}\n")
}

func FuzzCluster(f *testing.F) {
	fuzzKind(f, "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\n", "metadata:\n  name: a\nspec:\n  controlPlaneRef:\n    name: b\n")
}

func FuzzMachine(f *testing.F) {
	fuzzKind(f, "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Machine\n", "metadata:\n  labels:\n    cluster.x-k8s.io/control-plane: ''\nspec:\n  version: v1\n")
}

func FuzzProvider(f *testing.F) {
	fuzzKind(f, "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Provider\n", "type: CoreProvider\nversion: v1.8.1\n")
}

func FuzzSecret(f *testing.F) {
	fuzzKind(f, "apiVersion: v1\nkind: Secret\n", "metadata:\n  name: a-sa\ndata:\n  tls.crt: AAAA\n", "type: kubernetes.io/service-account-token\n")
}

func FuzzLBCheck(f *testing.F) {
	fuzzKind(f, "apiVersion: infrastructure.cluster.x-k8s.io/v1beta2\nkind: AWSCluster\n",
		"spec:\n  controlPlaneLoadBalancer:\n    healthCheckProtocol: SSL\n", "status:\n  network:\n    apiServerElb:\n      healthChecks:\n        target: 'HTTPS:6443/readyz'\n")
}

func FuzzKubeadm(f *testing.F) {
	fuzzKind(f, "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n",
		"apiServer:\n  extraArgs:\n  - name: a\n    value: b\n", "apiServer:\n  extraArgs:\n    a: b\n")
}

func FuzzStaticPod(f *testing.F) {
	fuzzKind(f, "apiVersion: v1\nkind: Pod\n", "spec:\n  containers:\n  - name: kube-apiserver\n    command: [kube-apiserver, --a=b, --c]\n")
}

func FuzzKops(f *testing.F) {
	fuzzKind(f, "apiVersion: kops.k8s.io/v1alpha2\nkind: Cluster\n", "spec:\n  kubeAPIServer:\n    additionalServiceAccountIssuers: [a]\n  serviceAccountIssuerDiscovery:\n    discoveryStore: s3://b/c\n")
}

func FuzzKopsInstanceGroup(f *testing.F) {
	fuzzKind(f, "apiVersion: kops.k8s.io/v1alpha2\nkind: InstanceGroup\n", "spec:\n  role: Master\n  minSize: 3\n")
}
