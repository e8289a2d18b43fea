// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package clusterapi

import (
	"context"
	"strings"
	"testing"
)

// kubeconfig is a one-context kubeconfig with cluster and user fields spliced in.
func kubeconfig(cluster, user string) string {
	return `apiVersion: v1
kind: Config
clusters: [{name: w1, cluster: {server: "https://10.200.1.1:6443"` + cluster + `}}]
users: [{name: admin, user: {` + user + `}}]
contexts: [{name: w1, context: {cluster: w1, user: admin}}]
current-context: w1
`
}

// TestSafeREST: a kubeconfig from a cluster is data; each way it could make credwatch run a
// command, read a file or use another host is refused, naming the Secret and the field.
func TestSafeREST(t *testing.T) {
	for _, tc := range []struct {
		name, cluster, user string
		refused             string // "" when accepted
	}{
		{name: "inline token", user: "token: abc"},
		{name: "inline client cert", cluster: ", certificate-authority-data: Y2E=", user: "client-certificate-data: Y2VydA==, client-key-data: a2V5"},
		{name: "exec plugin", user: "exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, 'touch /tmp/pwned']}", refused: "users[].user.exec"},
		{name: "auth-provider", user: "auth-provider: {name: oidc, config: {idp-issuer-url: https://example.invalid}}", refused: "users[].user.auth-provider"},
		{name: "tokenFile", user: "tokenFile: /root/.kube/token", refused: "users[].user.tokenFile"},
		{name: "client cert path", user: "client-certificate: /etc/kubernetes/pki/admin.crt", refused: "users[].user.client-certificate"},
		{name: "client key path", user: "client-key: /etc/kubernetes/pki/admin.key", refused: "users[].user.client-key"},
		{name: "CA path", cluster: ", certificate-authority: /etc/ssl/ca.pem", user: "token: abc", refused: "clusters[].cluster.certificate-authority"},
		{name: "proxy", cluster: ", proxy-url: http://127.0.0.1:3128", user: "token: abc", refused: "clusters[].cluster.proxy-url"},
		{name: "exec and tokenFile", user: "tokenFile: /t, exec: {apiVersion: client.authentication.k8s.io/v1, command: id}", refused: "users[].user.exec, users[].user.tokenFile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := SafeREST([]byte(kubeconfig(tc.cluster, tc.user)), "Secret default/w1-kubeconfig data.value")
			if tc.refused == "" {
				if err != nil || cfg.Host != "https://10.200.1.1:6443" || cfg.ExecProvider != nil || cfg.AuthProvider != nil || cfg.BearerTokenFile != "" {
					t.Fatalf("SafeREST = %+v, %v", cfg, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("SafeREST accepted %s", tc.refused)
			}
			msg := err.Error()
			if !strings.Contains(msg, "Secret default/w1-kubeconfig") || !strings.Contains(msg, "refused "+tc.refused+":") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming the Secret and %s", msg, tc.refused)
			}
		})
	}
}

func TestSafeRESTServer(t *testing.T) {
	for _, kc := range []string{
		strings.Replace(kubeconfig("", "token: abc"), "https://", "http://", 1),
		strings.Replace(kubeconfig("", "token: abc"), "current-context: w1", "current-context: other", 1),
		strings.Replace(kubeconfig("", "token: abc"), "cluster: w1, user", "cluster: w9, user", 1),
	} {
		if _, err := SafeREST([]byte(kc), "Secret x"); err == nil || !strings.HasPrefix(err.Error(), "Secret x:") {
			t.Errorf("SafeREST(%q): err = %v", kc, err)
		}
	}
}

// TestKubeconfigStringData: a Secret written with stringData is read as the API server merges it.
func TestKubeconfigStringData(t *testing.T) {
	sec := obj("v1", "Secret", "default", "w1-kubeconfig", nil, map[string]any{
		"data":       map[string]any{"value": "bm90IGEga3ViZWNvbmZpZw=="},
		"stringData": map[string]any{"value": kubeconfig("", "token: abc")},
	})
	cfg, err := KubeconfigREST(sec)
	if err != nil || cfg.BearerToken != "abc" {
		t.Fatalf("KubeconfigREST = %+v, %v", cfg, err)
	}
	exec := secret("w4-kubeconfig", []byte(kubeconfig("", "exec: {apiVersion: client.authentication.k8s.io/v1, command: touch, args: [/tmp/pwned]}")))
	if _, err := reader(t, exec).WorkloadREST(context.Background(), Ref{"default", "w4"}); err == nil || !strings.Contains(err.Error(), "users[].user.exec") {
		t.Errorf("WorkloadREST of an exec kubeconfig: %v", err)
	}
}
