// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package kubelet_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/credwatch/credwatch/pkg/kubelet"
)

var now = time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)

func TestReadStart(t *testing.T) {
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
		st, ok := kubelet.ReadStart(tt.e)
		if ok != tt.ok || ok && (st.Node != "node-2" || !st.Last.Equal(at.Time) || st.Count != 1) {
			t.Errorf("%s: got %+v, %v; want ok %v", tt.name, st, ok, tt.ok)
		}
	}
}

func TestLoops(t *testing.T) {
	t.Parallel()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	// One Event per kubelet process: each start is a new process with a new event correlator.
	starts := func(node string, at ...time.Duration) []kubelet.Start {
		var out []kubelet.Start
		for _, d := range at {
			out = append(out, kubelet.Start{Node: node, Last: ago(d), Count: 1})
		}
		return out
	}
	loop := starts("node-2", 35*time.Second, 25*time.Second, 15*time.Second, 5*time.Second)
	tests := []struct {
		name   string
		starts []kubelet.Start
		status map[string]kubelet.Status
		want   []string // "node/starts/registered"
	}{
		{"never registered", loop, nil, []string{"node-2/4/false"}},
		{"registered, no status since", loop, map[string]kubelet.Status{"node-2": {Registered: true, Ready: true, Heartbeat: ago(2 * time.Minute)}}, []string{"node-2/4/true"}},
		{"registered, not Ready", loop, map[string]kubelet.Status{"node-2": {Registered: true, Heartbeat: ago(time.Second)}}, []string{"node-2/4/true"}},
		{"restarted on purpose, Ready since", loop, map[string]kubelet.Status{"node-2": {Registered: true, Ready: true, Heartbeat: ago(time.Second)}}, nil},
		{"two starts are not a loop", starts("node-2", 20*time.Second, 5*time.Second), nil, nil},
		{"starts older than the window", starts("node-2", 13*time.Minute, 12*time.Minute, 11*time.Minute), nil, nil},
		{"one Event counting three starts", []kubelet.Start{{Node: "node-2", Last: ago(time.Minute), Count: 3}}, nil, []string{"node-2/3/false"}},
		{"two nodes, sorted", append(starts("node-b", 3*time.Second, 2*time.Second, time.Second), starts("node-a", 3*time.Second, 2*time.Second, time.Second)...), nil,
			[]string{"node-a/3/false", "node-b/3/false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, l := range kubelet.Loops(tt.starts, tt.status, now) {
				got = append(got, fmt.Sprintf("%s/%d/%v", l.Node, l.Starts, l.Status.Registered))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Loops = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStatusOf(t *testing.T) {
	hb := metav1.NewTime(now.Add(-time.Minute))
	n := &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: hb}}}}
	if st := kubelet.StatusOf(n); !st.Registered || !st.Ready || !st.Heartbeat.Equal(hb.Time) {
		t.Errorf("StatusOf = %+v, want registered, Ready, heartbeat %s", st, hb)
	}
	n.Status.Conditions[1].Status = corev1.ConditionUnknown
	if st := kubelet.StatusOf(n); st.Ready {
		t.Errorf("StatusOf with Ready Unknown = %+v, want not Ready", st)
	}
}
