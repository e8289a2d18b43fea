// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAccessLogClients: access-log 401s count per client and member as client-unauthorized,
// unless the same member names a cause nearby; then that cause explains them and the verdict
// counts only the unexplained ones.
func TestAccessLogClients(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cp1 := write("cp-1.log", ""+
		`E1129 08:00:00.000000       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"`+"\n"+
		`I1129 08:00:00.000100       1 httplog.go:134] "HTTP" verb="GET" URI="/api/v1/nodes" latency="1ms" userAgent="metrics-server/v0.7.2 (linux/amd64) kubernetes/$Format" audit-ID="a" srcIP="10.0.0.5:40000" resp=401`+"\n")
	cp2 := write("cp-2.log", ""+
		`I1129 09:30:00.000000       1 httplog.go:134] "HTTP" verb="LIST" URI="/api/v1/pods" latency="1ms" userAgent="argocd-application-controller/v2.9" audit-ID="b" srcIP="10.0.0.6:1234" resp=401`+"\n"+
		`I1129 09:30:01.000000       1 httplog.go:134] "HTTP" verb="LIST" URI="/api/v1/pods" latency="1ms" userAgent="argocd-application-controller/v2.9" audit-ID="c" srcIP="10.0.0.6:1234" resp=401`+"\n"+
		`I1129 09:30:02.000000       1 httplog.go:134] "HTTP" verb="GET" URI="/api/v1/nodes" latency="1ms" userAgent="kubectl/v1.36.3" audit-ID="d" srcIP="10.0.0.7:1" resp=401`+"\n")
	r := analyzeFiles(t, Config{}, cp1, cp2)
	got := map[string]Group{}
	for _, g := range r.Failures {
		if g.Cause == CauseClient {
			got[g.Host+"/"+g.Client] = g
		}
	}
	want := map[string]struct {
		count     int
		explained string
	}{
		"cp-1/metrics-server":                {1, "token-expired"},
		"cp-2/argocd-application-controller": {2, ""},
		"cp-2/kubectl":                       {1, ""},
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || g.Count != w.count || g.Explained != w.explained || g.Component != "kube-apiserver" && g.Component != "apiserver" {
			t.Errorf("%s: got %+v, want count %d explained %q", k, g, w.count, w.explained)
		}
	}
	if len(got) != len(want) {
		t.Errorf("client groups %v, want %d", got, len(want))
	}
	for _, h := range r.Verdict {
		if h.Cause == CauseClient && h.Count != 3 {
			t.Errorf("verdict counts %d unexplained 401s, want 3: %s", h.Count, h.Statement)
		}
	}
}

func TestClientOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a    *AuditInfo
		want string
	}{
		{&AuditInfo{UserAgent: "kube-controller-manager/v1.36.3 (linux/amd64) kubernetes/abc/system:serviceaccount:kube-system:x"}, "kube-controller-manager"},
		{&AuditInfo{SourceIPs: []string{"10.0.0.7:5000"}}, "10.0.0.7"},
		{&AuditInfo{SourceIPs: []string{"10.0.0.7"}}, "10.0.0.7"},
		{nil, ""},
	} {
		if got := clientOf(tt.a); got != tt.want {
			t.Errorf("%+v: got %q want %q", tt.a, got, tt.want)
		}
	}
}
