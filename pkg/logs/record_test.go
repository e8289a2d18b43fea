// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import "testing"

// TestEnvelopeFallbacks: the envelopes parseRecord tries last (compose, a cut syslog line, a
// program name, a leading time) give the component and format, and ordinary text is plain.
func TestEnvelopeFallbacks(t *testing.T) {
	t.Parallel()
	tests := []struct{ line, component, format string }{
		{`harbor-core      | 2021-05-21T05:04:58Z [ERROR] boom`, "harbor-core", "compose+timestamp"},
		{`3 16:12:47 Ks-Kubernetes-Node01 k3s[911]: E0403 16:12:47.424793     911 authentication.go:63] "x"`, "k3s", "syslog+klog"},
		{`2021-09-08T08:45:40.239Z [ERROR] auth.kubernetes.auth_kubernetes_7d5bd6ff: login unauthorized`, "", "timestamp"},
		{`2017-06-06T08:00:50.756915000Z Error: ENOENT: no such file or directory, open '/x/token'`, "", "timestamp"},
		{`[     0.001141s] ERROR ThreadId(01) linkerd_app::env: x`, "", "plain"},
		{`a | b`, "", "plain"},
		{`kubelet: E0622 19:41:05.147265    2153 kubelet_node_status.go:326] Error updating node status, will retry`, "kubelet", "syslog+klog"},
		{`note: E0622 is not a klog line`, "", "plain"},
	}
	for _, tt := range tests {
		r := parseRecord(tt.line, lineHint{})
		if r.Component != tt.component || r.Format != tt.format {
			t.Errorf("%q: component %q format %q, want %q %q", tt.line, r.Component, r.Format, tt.component, tt.format)
		}
	}
}
