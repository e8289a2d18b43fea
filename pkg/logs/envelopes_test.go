package logs

import (
	"reflect"
	"testing"
)

func TestAccessLog401(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, msg string
		want      *AuditInfo
	}{
		{"wrap.go", `GET /api/v1/nodes?limit=500&resourceVersion=0: (4.386595ms) 401 [metrics-server/v0.0.0 (linux/amd64) kubernetes/$Format 35.193.27.95:47328]`,
			&AuditInfo{Code: 401, Verb: "GET", URI: "/api/v1/nodes?limit=500&resourceVersion=0",
				UserAgent: "metrics-server/v0.0.0 (linux/amd64) kubernetes/$Format", SourceIPs: []string{"35.193.27.95:47328"}}},
		{"handlers.go", `GET /: (79.052µs) 401`, &AuditInfo{Code: 401, Verb: "GET", URI: "/"}},
		{"httplog", `"HTTP" verb="LIST" URI="/api/v1/pods" latency="1ms" userAgent="kubectl/v1.36.3" audit-ID="a1" srcIP="10.0.0.9:5000" resp=401`,
			&AuditInfo{Code: 401, Verb: "LIST", URI: "/api/v1/pods", UserAgent: "kubectl/v1.36.3", AuditID: "a1", SourceIPs: []string{"10.0.0.9:5000"}}},
		{"200", `GET /healthz: (1ms) 200 [kube-probe/1.36 10.0.0.1:1]`, nil},
		{"httplog 200", `"HTTP" verb="GET" URI="/readyz" resp=200`, nil},
		{"prose", `GET requests failed (x) 401 times`, nil},
		{"4010", `GET /x: (1ms) 4010`, nil},
	}
	for _, tt := range tests {
		got, ok := accessLog401(tt.msg)
		if ok != (tt.want != nil) || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v,%v want %+v", tt.name, got, ok, tt.want)
		}
	}
}

func TestEnvelopeFallbacks(t *testing.T) {
	t.Parallel()
	tests := []struct{ line, component, format string }{
		{`harbor-core      | 2021-05-21T05:04:58Z [ERROR] boom`, "harbor-core", "compose+timestamp"},
		{`3 16:12:47 Ks-Kubernetes-Node01 k3s[911]: E0403 16:12:47.424793     911 authentication.go:63] "x"`, "k3s", "syslog+klog"},
		{`2021-09-08T08:45:40.239Z [ERROR] auth.kubernetes.auth_kubernetes_7d5bd6ff: login unauthorized`, "", "timestamp"},
		{`[     0.001141s] ERROR ThreadId(01) linkerd_app::env: x`, "", "plain"},
		{`a | b`, "", "plain"},
		{`kubelet: E0622 19:41:05.147265    2153 kubelet_node_status.go:326] Error updating node status, will retry`, "kubelet", "syslog+klog"},
		{`note: E0622 is not a klog line`, "", "plain"},
	}
	for _, tt := range tests {
		r := parseRecord(tt.line, lineContext{})
		if r.Component != tt.component || r.Format != tt.format {
			t.Errorf("%q: component %q format %q, want %q %q", tt.line, r.Component, r.Format, tt.component, tt.format)
		}
	}
}
