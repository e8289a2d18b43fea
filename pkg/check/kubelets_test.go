// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/kubelet"
)

func TestCheckKubeletRestarts(t *testing.T) {
	t.Parallel()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	// Which kubelets loop is kubelet.Loops' (tested there); this is the finding's wording. One
	// Event counting four starts, the last 5 s ago.
	loop := []kubelet.Start{{Node: "node-2", Last: ago(5 * time.Second), Count: 4}}
	rejected := &cloud.Observation{Inventory: cloud.Inventory{Items: []cloud.Item{{
		Credential: cloud.Credential{Provider: cloud.VSphere, Source: cloud.Source{Kind: "file", Path: "/etc/kubernetes/cloud_config"}},
		Test:       cloud.TestResult{Verdict: cloud.Rejected}}}}}
	tests := []struct {
		name   string
		nodes  []Node
		starts []kubelet.Start
		cloud  *cloud.Observation
		want   []string // substrings of the one finding's message; nil: no finding
	}{
		{"never registered, restarting every 10 s", []Node{{Name: "node-1", Ready: true, Heartbeat: ago(5 * time.Second)}}, loop, nil,
			[]string{"node node-2 started 4 times", "it never registered its Node", `"Kubelet failed to get node info"`}},
		{"registered, no status since its last start", []Node{{Name: "node-2", Ready: true, Heartbeat: ago(2 * time.Minute)}}, loop, nil,
			[]string{"has not posted its node's status since (last heartbeat 1m55s before its last start)"}},
		{"cause: the rejected cloud credential", nil, loop, rejected,
			[]string{"the cloud rejects the credential in file /etc/kubernetes/cloud_config"}},
		{"restarted on purpose, Ready since", []Node{{Name: "node-2", Ready: true, Heartbeat: ago(time.Second)}}, loop, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := checkKubeletRestarts(&Snapshot{Now: now, Nodes: tt.nodes, KubeletStarts: tt.starts, Cloud: tt.cloud})
			if tt.want == nil {
				if len(fs) != 0 {
					t.Fatalf("want no finding, got %v", fs[0].Message)
				}
				return
			}
			if len(fs) != 1 || fs[0].ID != idKubeletCrashLoop || fs[0].Object != "node/node-2" {
				t.Fatalf("want one %s on node/node-2, got %+v", idKubeletCrashLoop, fs)
			}
			for _, w := range tt.want {
				if !strings.Contains(fs[0].Message, w) {
					t.Errorf("message lacks %q:\n%s", w, fs[0].Message)
				}
			}
		})
	}
}
