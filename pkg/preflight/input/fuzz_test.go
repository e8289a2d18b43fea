// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package input

import (
	"strings"
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

// fuzzCAPI fuzzes the parser of one Cluster API kind in both API versions: v1beta2 says which
// apiVersion the document carries, so that each version's seeds mutate under their own.
func fuzzCAPI(f *testing.F, group, kind string, v1beta1, v1beta2 []string) {
	for _, s := range v1beta1 {
		f.Add(false, s)
	}
	for _, s := range v1beta2 {
		f.Add(true, s)
	}
	f.Fuzz(func(t *testing.T, v2 bool, body string) {
		v := capiV1Beta1
		if v2 {
			v = capiV1Beta2
		}
		s := &Set{}
		_ = s.Add("fuzz.yaml", []byte("apiVersion: "+group+"/"+v+"\nkind: "+kind+"\n"+body))
		_ = s.ClusterName()
		for i := range s.KCPs {
			_ = s.KCPs[i].SameSpec(&s.KCPs[0])
		}
	})
}

func FuzzKubeadmControlPlane(f *testing.F) {
	fuzzCAPI(f, "controlplane.cluster.x-k8s.io", "KubeadmControlPlane", []string{
		"spec:\n  replicas: 3\n  rolloutStrategy:\n    rollingUpdate:\n      maxSurge: 0\n  kubeadmConfigSpec:\n    clusterConfiguration:\n      apiServer:\n        timeoutForControlPlane: 20m\n        extraArgs:\n          service-account-issuer: x\n",
		"spec:\n  kubeadmConfigSpec:\n    files:\n    - path: /a\n      encoding: base64\n      content: '!!'\n",
		"spec:\n  kubeadmConfigSpec:\n    initConfiguration:\n      patches:\n        directory: /p\n    clusterConfiguration:\n      controllerManager:\n        extraArgs:\n          service-account-private-key-file: ''\n    files:\n    - path: /p/kube-apiserver+json.json\n      content: '[]'\n    - path: /authn.yaml\n      content: 'kind: AuthenticationConfiguration'\n",
	}, []string{
		"spec:\n  replicas: 3\n  rollout:\n    after: '2026-12-01T00:00:00Z'\n    strategy:\n      rollingUpdate:\n        maxSurge: 0\n  machineTemplate:\n    spec:\n      infrastructureRef:\n        apiGroup: infrastructure.cluster.x-k8s.io\n        kind: VSphereMachineTemplate\n        name: a\n  kubeadmConfigSpec:\n    clusterConfiguration:\n      apiServer:\n        extraArgs:\n        - name: service-account-issuer\n          value: x\n",
		"spec:\n  kubeadmConfigSpec:\n    joinConfiguration:\n      timeouts:\n        tlsBootstrapSeconds: 300\n      nodeRegistration:\n        kubeletExtraArgs:\n        - name: a\n",
	})
}

func FuzzKubeadmConfig(f *testing.F) {
	fuzzCAPI(f, "bootstrap.cluster.x-k8s.io", "KubeadmConfig", []string{"spec:\n  preKubeadmCommands: [a]\n"},
		[]string{"spec:\n  clusterConfiguration:\n    apiServer:\n      extraArgs:\n      - {name: a, value: b}\n"})
}

func FuzzKubeadmConfigTemplate(f *testing.F) {
	fuzzCAPI(f, "bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate", []string{"spec:\n  template:\n    spec: {}\n"},
		[]string{"spec:\n  template:\n    spec:\n      joinConfiguration:\n        nodeRegistration:\n          kubeletExtraArgs: [{name: a, value: b}]\n"})
}

func FuzzCluster(f *testing.F) {
	fuzzCAPI(f, "cluster.x-k8s.io", "Cluster", []string{"metadata:\n  name: a\nspec:\n  controlPlaneRef:\n    name: b\n"},
		[]string{"metadata:\n  name: a\nspec:\n  clusterNetwork:\n    serviceDomain: c\n  controlPlaneRef:\n    apiGroup: controlplane.cluster.x-k8s.io\n    kind: KubeadmControlPlane\n    name: b\n"})
}

func FuzzMachine(f *testing.F) {
	fuzzCAPI(f, "cluster.x-k8s.io", "Machine", []string{"metadata:\n  labels:\n    cluster.x-k8s.io/control-plane: ''\nspec:\n  version: v1\n"},
		[]string{"metadata:\n  labels:\n    cluster.x-k8s.io/control-plane: ''\nspec:\n  version: v1\n  bootstrap:\n    configRef:\n      apiGroup: bootstrap.cluster.x-k8s.io\n      kind: KubeadmConfig\n      name: a\n"})
}

func FuzzProvider(f *testing.F) {
	fuzzKind(f, "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Provider\n", "type: CoreProvider\nversion: v1.8.1\n")
}

func FuzzExtensionConfig(f *testing.F) {
	fuzzKind(f, "apiVersion: runtime.cluster.x-k8s.io/v1beta2\nkind: ExtensionConfig\n",
		"metadata: {name: x}\nstatus:\n  handlers:\n  - name: a\n    requestHook: {hook: CanUpdateMachine}\n", "status: {handlers: [{}]}\n")
}

func FuzzManagerDeployment(f *testing.F) {
	fuzzKind(f, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: m\n  labels: {cluster.x-k8s.io/provider: control-plane-kubeadm}\n",
		"spec:\n  template:\n    spec:\n      containers:\n      - args: [--feature-gates=InPlaceUpdates=true,A=false]\n",
		"spec: {template: {spec: {containers: [{command: [--feature-gates], args: []}]}}}\n")
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

// FuzzJWKS: a JWKS document, private members and all, is read or refused, never a panic, and
// a private member's value never reaches a note or an error.
func FuzzJWKS(f *testing.F) {
	for _, s := range []string{
		`{"keys":[{"kty":"EC","crv":"P-256","x":"eGm0FPm2YGHFhGmsxDNfacoC_YiKv9Mhbd80f-3qJsQ","y":"1wlkR94DmfIS0ZBCCWoXvcBaZ1G2K8RZ6dnDqKCnbD0","d":"c2VjcmV0"}]}`,
		`{"keys":[]}`, `{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`, "keys:\n- kty: RSA\n  n: AQAB\n  e: AQAB\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		s := &Set{}
		err := s.Add("fuzz.json", []byte(doc))
		for _, j := range s.JWKS {
			for _, k := range j.Keys {
				if k.Private != nil {
					t.Fatalf("a private key kept from %q", doc)
				}
			}
		}
		if err != nil && strings.Contains(err.Error(), "c2VjcmV0") {
			t.Fatalf("error shows a private member: %v", err)
		}
		for _, n := range s.Notes {
			if strings.Contains(n, "c2VjcmV0") {
				t.Fatalf("note shows a private member: %s", n)
			}
		}
	})
}

// FuzzAuthenticationConfiguration: an AuthenticationConfiguration document, as a document and
// as a KubeadmControlPlane file's content.
func FuzzAuthenticationConfiguration(f *testing.F) {
	fuzzKind(f, "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n",
		"jwt:\n- issuer:\n    url: https://a\n    audiences: [x]\n", "jwt: {}\n", "jwt:\n- issuer: 1\n")
}

func FuzzParseAuthnConfig(f *testing.F) {
	f.Add("apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: https://a\n")
	f.Fuzz(func(t *testing.T, doc string) {
		_, _ = ParseAuthnConfig(Object{File: "fuzz"}, []byte(doc))
	})
}
