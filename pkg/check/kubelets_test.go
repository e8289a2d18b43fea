// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/credwatch/credwatch/pkg/cloud"
)

func TestCheckKubeletRestarts(t *testing.T) {
	t.Parallel()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	// One Event per kubelet process: each start is a new process with a new event correlator.
	starts := func(node string, at ...time.Duration) []KubeletStart {
		var out []KubeletStart
		for _, d := range at {
			out = append(out, KubeletStart{Node: node, Last: ago(d), Count: 1})
		}
		return out
	}
	loop := starts("node-2", 35*time.Second, 25*time.Second, 15*time.Second, 5*time.Second)
	rejected := &cloud.Observation{Inventory: cloud.Inventory{Items: []cloud.Item{{
		Credential: cloud.Credential{Provider: cloud.VSphere, Source: cloud.Source{Kind: "file", Path: "/etc/kubernetes/cloud_config"}},
		Test:       cloud.TestResult{Verdict: cloud.Rejected}}}}}
	tests := []struct {
		name   string
		nodes  []Node
		starts []KubeletStart
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
		{"two starts are not a loop", nil, starts("node-2", 20*time.Second, 5*time.Second), nil, nil},
		{"starts older than the window", nil, starts("node-2", 13*time.Minute, 12*time.Minute, 11*time.Minute), nil, nil},
		{"one Event counting three starts", nil, []KubeletStart{{Node: "node-2", Last: ago(time.Minute), Count: 3}}, nil,
			[]string{"started 3 times"}},
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

func TestKubeletStart(t *testing.T) {
	t.Parallel()
	at := metav1.NewTime(now.Add(-time.Minute))
	ev := func(component, reason string) corev1.Event {
		return corev1.Event{Reason: reason, InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "node-2"},
			Source: corev1.EventSource{Component: component, Host: "node-2"}, Message: "Starting kubelet.", LastTimestamp: at, Count: 1}
	}
	tests := []struct {
		name string
		e    corev1.Event
		ok   bool
	}{
		{"the kubelet's start", ev("kubelet", "Starting"), true},
		{"kube-proxy's start", ev("kube-proxy", "Starting"), false},
		{"another reason", ev("kubelet", "NodeReady"), false},
	}
	for _, tt := range tests {
		st, ok := kubeletStart(tt.e)
		if ok != tt.ok || ok && (st.Node != "node-2" || !st.Last.Equal(at.Time) || st.Count != 1) {
			t.Errorf("%s: got %+v, %v; want ok %v", tt.name, st, ok, tt.ok)
		}
	}
}
