// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

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
		got, ok := AccessLog401(tt.msg)
		if ok != (tt.want != nil) || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v,%v want %+v", tt.name, got, ok, tt.want)
		}
	}
}
