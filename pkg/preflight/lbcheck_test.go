// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// TestLBVerdictByProvider: what each provider release builds when its cluster object states no
// check (docs/preflight.md cites the sources), and what a stated check is.
func TestLBVerdictByProvider(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lb      input.LBCheck
		version string
		desc    string // in the description; "" for unjudged
		bad     bool
	}{
		{"capa unset v2.3.5", lbOf("AWSCluster", "infrastructure.cluster.x-k8s.io/v1beta2", "", ""), "v2.3.5", "SSL:6443", true},
		{"capa unset v2.4.0 (not /readyz)", lbOf("AWSCluster", "infrastructure.cluster.x-k8s.io/v1beta2", "", ""), "v2.4.0", "SSL:6443", true},
		{"capa unset v2.8.1", lbOf("AWSCluster", "infrastructure.cluster.x-k8s.io/v1beta2", "", ""), "v2.8.1", "(TCP:6443)", true},
		{"capa unset v2.11.1", lbOf("AWSCluster", "infrastructure.cluster.x-k8s.io/v1beta2", "", ""), "v2.11.1", "TCP:6443", true},
		{"capa unset, version unknown", lbOf("AWSCluster", "infrastructure.cluster.x-k8s.io/v1beta2", "", ""), "", "TCP:6443", true},
		{"capa v1.x", lbOf("AWSCluster", "infrastructure.cluster.x-k8s.io/v1beta1", "", ""), "", "classic ELB SSL:6443", true},
		{"capa HTTPS", lbOf("AWSCluster", "infrastructure.cluster.x-k8s.io/v1beta2", "HTTPS", ""), "v2.11.1", "HTTPS /readyz", false},
		{"capz v1.9.0", lbOf("AzureCluster", "infrastructure.cluster.x-k8s.io/v1beta1", "", ""), "v1.9.0", "TCP probe", true},
		{"capz v1.26.0", lbOf("AzureCluster", "infrastructure.cluster.x-k8s.io/v1beta1", "", ""), "v1.26.0", "HTTPS /readyz", false},
		{"capz unknown", lbOf("AzureCluster", "infrastructure.cluster.x-k8s.io/v1beta1", "", ""), "", "", false},
		{"capv kube-vip", lbOf("VSphereCluster", "infrastructure.cluster.x-k8s.io/v1beta1", "", ""), "v1.16.1", "kube-vip", true},
		{"capo octavia", lbOf("OpenStackCluster", "infrastructure.cluster.x-k8s.io/v1beta1", "", ""), "", "Octavia TCP", true},
		{"caph default", lbOf("HetznerCluster", "infrastructure.cluster.x-k8s.io/v1beta1", "", ""), "v1.1.8", "own TCP", true},
		{"caph http /readyz", lbOf("HetznerCluster", "infrastructure.cluster.x-k8s.io/v1beta1", "HTTP", "/readyz"), "v1.1.8", "HTTP /readyz", false},
		{"caph http no path", lbOf("HetznerCluster", "infrastructure.cluster.x-k8s.io/v1beta1", "HTTP", ""), "v1.1.8", "HTTP ", true},
		{"unknown provider", lbOf("FooCluster", "infrastructure.cluster.x-k8s.io/v1beta1", "", ""), "v1.0.0", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desc, bad := lbVerdict(tc.lb, tc.version)
			if tc.desc == "" {
				if desc != "" {
					t.Errorf("judged %q, want not judged", desc)
				}
				return
			}
			if !strings.Contains(desc, tc.desc) || bad != tc.bad {
				t.Errorf("lbVerdict = %q, %v; want %q, %v", desc, bad, tc.desc, tc.bad)
			}
		})
	}
}

func lbOf(kind, apiVersion, protocol, path string) input.LBCheck {
	return input.LBCheck{Object: input.Object{Kind: kind, Name: "w1"}, APIVersion: apiVersion, Protocol: protocol, Path: path}
}

// TestProviderClustersRead: the provider clusters whose balancer the provider decides are read
// as load-balancer checks, not listed as ignored; CAPO's only when it makes an Octavia one.
func TestProviderClustersRead(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		read bool
	}{
		{"apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: VSphereCluster\nmetadata: {name: w1}\nspec: {controlPlaneEndpoint: {host: 10.0.0.10, port: 6443}}\n", true},
		{"apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: AzureCluster\nmetadata: {name: w1}\nspec: {location: westeurope}\n", true},
		{"apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: OpenStackCluster\nmetadata: {name: w1}\nspec: {apiServerLoadBalancer: {enabled: true}}\n", true},
		{"apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: OpenStackCluster\nmetadata: {name: w1}\nspec: {}\n", false},
		{"apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: HetznerCluster\nmetadata: {name: w1}\nspec: {controlPlaneLoadBalancer: {healthCheck: {protocol: http, path: /readyz}}}\n", true},
		{"apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: DockerCluster\nmetadata: {name: w1}\nspec: {}\n", false},
	} {
		var s input.Set
		if err := s.Add("c.yaml", []byte(tc.doc)); err != nil {
			t.Fatal(err)
		}
		if got := len(s.LBChecks) == 1; got != tc.read || got == (len(s.Ignored) == 1) {
			t.Errorf("%q: %d checks, %d ignored; want read %v", tc.doc, len(s.LBChecks), len(s.Ignored), tc.read)
		}
	}
}
