// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"bytes"
	"context"
	"io"
	"slices"
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs/internal/scan"
)

// oldAccessLog are verbatim access-log lines of releases before 1.19 answering 401, each with
// where it was copied from, and the client the line names.
var oldAccessLog = []struct{ line, from, agent string }{
	{`I0428 15:42:46.748193       1 handlers.go:135] GET /: (79.052µs) 401`,
		"https://github.com/kubernetes/kubernetes/issues/7441 (2015)", ""},
	{`kube-apiserver: I0622 19:41:05.146860    1021 wrap.go:75] GET /api/v1/nodes/172.17.60.112?resourceVersion=0: (81.124µs) 401 [[kubelet/v1.6.2 (linux/amd64) kubernetes/477efc3] 172.17.60.112:32843]`,
		"a public note on an expired kubelet certificate, v1.6.2 (it cites https://www.cnblogs.com/centos-python/articles/13168559.html)", "kubelet/v1.6.2 (linux/amd64) kubernetes/477efc3"},
	{`I0321 00:32:36.460494       1 wrap.go:47] GET /api/v1/nodes?limit=500&resourceVersion=0: (4.386595ms) 401 [metrics-server/v0.0.0 (linux/amd64) kubernetes/$Format 35.193.27.95:47328]`,
		"https://github.com/kubernetes-sigs/metrics-server/issues/232", "metrics-server/v0.0.0 (linux/amd64) kubernetes/$Format"},
}

// TestOldAccessLogFound checks that the scan passes pre-1.19 access-log lines on their own (the
// `s) 401` marker) in every scan variant, and that a file of them, among ordinary lines, counts
// one client-unauthorized failure each with its client.
func TestOldAccessLogFound(t *testing.T) {
	t.Parallel()
	var file bytes.Buffer
	for _, l := range oldAccessLog {
		file.WriteString("I0622 19:41:05.100000    1021 wrap.go:75] GET /healthz: (52.508µs) 200 [[kube-probe/1.6] 10.0.0.1:1]\n")
		file.WriteString(l.line + "\n")
	}
	for name, g := range scan.Variants(anchors(catalogue.Default()), t.Logf) {
		var want []int
		for i, line := range bytes.SplitAfter(file.Bytes(), []byte{'\n'}) {
			if i%2 == 1 {
				want = append(want, bytes.Index(file.Bytes(), line))
			}
		}
		if got := g.Lines(file.Bytes(), nil); !slices.Equal(got, want) {
			t.Errorf("%s: scan passes lines at %v, want %v", name, got, want)
		}
	}
	in := Input{Name: "old.log", Host: "old", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(file.Bytes())), nil }}
	rep, err := Analyze(context.Background(), Config{}, []Input{in})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.AuthFailures != len(oldAccessLog) {
		t.Fatalf("%d authentication failures, want %d", rep.Summary.AuthFailures, len(oldAccessLog))
	}
	for _, l := range oldAccessLog {
		ok := false
		for _, ev := range rep.Events {
			if ev.Cause == "client-unauthorized" && ev.Audit != nil && ev.Audit.UserAgent == l.agent && bytes.Contains([]byte(l.line), []byte(ev.Line)) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("%s: no client-unauthorized event with agent %q", l.from, l.agent)
		}
	}
}
