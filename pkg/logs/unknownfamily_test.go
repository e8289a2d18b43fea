// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"bytes"
	"context"
	"io"
	"slices"
	"testing"
)

// TestConsumerFailuresAreNeverNowhere: issue 43's consumers fail in words of their own. A line on
// the credential path that no catalogue message names must still pass the reader's gate and be
// reported — as unknown with the family it is nearest and the words that put it there — never
// dropped. One line per consumer family, verbatim from the thread named (a title where the thread
// quotes the message in it). The consumers' own inventory (issue 43 item 1) will name some of
// these; a named cause is then the better answer and passes, an unknown one must carry its family.
func TestConsumerFailuresAreNeverNowhere(t *testing.T) {
	t.Parallel()
	tests := []struct {
		family, url, line string
		nearest           string // the family an unknown answer must name
	}{
		{"Linkerd proxy identity", "https://github.com/linkerd/linkerd2/issues/3620",
			`Failed to certify identity: grpc-status: Unknown, grpc-message: "the request could not be dispatched in a timely fashion`,
			"certificates"},
		{"Envoy jwt_authn and its JWKS fetch", "https://github.com/envoyproxy/envoy/issues/26500",
			`Jwt authentication completed with: Jwks remote fetch is failed`, "JWT and OIDC libraries"},
		{"Istio CA client", "https://github.com/istio/istio/issues/44557",
			`2023-04-26T10:07:42.709648Z     warn    sds     failed to warm certificate: failed to generate workload certificate: create certificate: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing dial tcp: i/o timeout"`,
			"certificates"},
		{"delegated authentication (kube-rbac-proxy)", "https://github.com/pulp/pulp-operator/issues/337",
			`E0221 13:59:47.110870       1 proxy.go:73] Unable to authenticate the request due to an error: tokenreviews.authentication.k8s.io is forbidden: User "system:serviceaccount:flotta:pulp-operator-sa" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope`,
			"service-account tokens"},
		{"Vault CSI provider", "https://github.com/hashicorp/vault-csi-provider/issues/112",
			`grpc.code=Unknown err="error making mount request: failed to login: 403 errors`, "cloud credentials"},
		{"Consul ACL login", "https://github.com/hashicorp/consul-k8s/issues/625",
			`2021-08-18T02:34:53.420Z [ERROR] Consul login failed; retrying: error="error logging in: Unexpected response code: 403 (rpc error making call: Permission denied)"`,
			"cloud credentials"},
		{"SPIRE agent", "https://github.com/spiffe/spire/issues/3152",
			`time="2022-06-09T18:29:08Z" level=error msg="Failed to collect all selectors for PID" error="workload attestor \"k8s\" failed: rpc error: code = Internal desc = workloadattestor(k8s): unexpected status code on pods response: 403 Forbidden (user=system:anonymous, verb=get, resource=nodes, subresource=proxy)" pid=69020 subsystem_name=workload_attestor`,
			""},
		{"Teleport kube agent", "https://github.com/gravitational/teleport/issues/25246",
			`2023-04-27T02:57:28Z ERRO [PROC:1]    Kube failed to establish connection to cluster: node "teleport-agent-0" [609f0c29-abb8-4545-892c-a27ba5fec03e] can not join the cluster, the token does not allow "Kube" role. pid:7.1 service/connect.go:119`,
			"service-account tokens"},
		{"an OIDC client behind Dex (Argo CD)", "https://github.com/argoproj/argo-cd/issues/16242",
			`failed to get token: oauth2: cannot fetch token: 401 Unauthorized`, "cloud credentials"},
		{"AWS SDK for Java", "https://github.com/aws/aws-sdk-java-v2/issues/5294",
			`software.amazon.awssdk.core.exception.SdkClientException: Unable to load credentials from any of the providers in the chain.`,
			"cloud credentials"},
		{"Azure Identity for .NET", "https://github.com/Azure/azure-sdk-for-net/issues/18961",
			`Exception message: ManagedIdentityCredential authentication failed`, "cloud credentials"},
		{"kubeadm join", "https://github.com/kubernetes-retired/kube-batch/pull/324",
			`[discovery] Failed to connect to API Server "172.18.0.2:6443": token id "r8vqrf" is invalid for this cluster or it has expired. Use "kubeadm token create" on the master node to creating a new valid token`,
			"service-account tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			data := []byte(tt.line + "\n")
			in := Input{Name: "consumer.log", Host: "h", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
			r, err := Analyze(context.Background(), Config{Year: 2026}, []Input{in})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Failures) == 0 {
				t.Fatalf("reported nowhere (%s): %s", tt.url, tt.line)
			}
			if c := r.Failures[0].Cause; c != CauseUnknown {
				t.Logf("named %s", c)
				return
			}
			if len(r.Unknown) != 1 || r.Unknown[0].Family == "" || len(r.Unknown[0].Words) == 0 {
				t.Fatalf("unknown without its family and words: %+v", r.Unknown)
			}
			if u := r.Unknown[0]; tt.nearest != "" && u.Family != tt.nearest {
				t.Errorf("nearest family %q (words %q), want %q", u.Family, u.Words, tt.nearest)
			} else {
				t.Logf("unknown, nearest %s by %q", u.Family, slices.Clone(u.Words))
			}
		})
	}
}
