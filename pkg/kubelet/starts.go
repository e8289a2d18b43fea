// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package kubelet

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// A kubelet that started LoopStarts times in LoopWindow, and has not posted its node's status
// since, is crash-looping: systemd's kubelet.service (Restart=always, RestartSec=10 s) starts it
// about every 10 s while it exits at start-up.
const (
	LoopWindow = 10 * time.Minute
	LoopStarts = 3
)

// Start is one Event of a kubelet's start: Count starts of node Node, the last at Last.
type Start struct {
	Node  string
	Last  time.Time
	Count int
}

// ListStarts pages through the Nodes' Starting Events the kubelets record at every start
// (BirthCry: "Starting kubelet."), pageSize at a time, each page bounded by timeout; kube-proxy's
// Starting Events are left out.
func ListStarts(ctx context.Context, cs kubernetes.Interface, pageSize int64, timeout time.Duration) ([]Start, error) {
	var out []Start
	opts := metav1.ListOptions{Limit: pageSize, FieldSelector: "involvedObject.kind=Node,reason=Starting"}
	for {
		ctx1, cancel := context.WithTimeout(ctx, timeout)
		list, err := cs.CoreV1().Events("").List(ctx1, opts)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("list node Events: %w", err)
		}
		for _, e := range list.Items {
			if st, ok := ReadStart(e); ok {
				out = append(out, st)
			}
		}
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

// ReadStart reads a kubelet's Starting Event.
func ReadStart(e corev1.Event) (Start, bool) {
	if e.Reason != "Starting" || e.InvolvedObject.Kind != "Node" ||
		e.Source.Component != "kubelet" && e.ReportingController != "kubelet" {
		return Start{}, false
	}
	last := e.LastTimestamp.Time
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		last = e.Series.LastObservedTime.Time
	case last.IsZero() && !e.EventTime.IsZero():
		last = e.EventTime.Time
	case last.IsZero():
		last = e.CreationTimestamp.Time
	}
	return Start{Node: e.InvolvedObject.Name, Last: last, Count: max(1, int(e.Count))}, true
}

// Status is what the API shows of a node's kubelet: whether its Node is registered, and its
// Ready condition with the time the kubelet last posted it.
type Status struct {
	Registered bool
	Ready      bool
	Heartbeat  time.Time
}

// StatusOf is what n, a registered Node, shows of its kubelet.
func StatusOf(n *corev1.Node) Status {
	st := Status{Registered: true}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			st.Ready, st.Heartbeat = c.Status == corev1.ConditionTrue, c.LastHeartbeatTime.Time
		}
	}
	return st
}

// Loop is a kubelet that restarts in a loop: Starts starts in LoopWindow, the last at Last.
type Loop struct {
	Node   string
	Starts int
	Last   time.Time
	Status Status
}

// Loops are the kubelets, by node name, that started at least LoopStarts times in the LoopWindow
// before now and have not posted a Ready status since their last start (or never registered their
// Node); status says what the API shows of each node, a node missing from it is unregistered.
func Loops(starts []Start, status map[string]Status, now time.Time) []Loop {
	byNode := map[string]*Loop{}
	for _, st := range starts {
		if st.Last.Before(now.Add(-LoopWindow)) {
			continue
		}
		l := byNode[st.Node]
		if l == nil {
			l = &Loop{Node: st.Node}
			byNode[st.Node] = l
		}
		l.Starts += st.Count
		if st.Last.After(l.Last) {
			l.Last = st.Last
		}
	}
	var out []Loop
	for name, l := range byNode {
		if l.Starts < LoopStarts {
			continue
		}
		l.Status = status[name]
		if l.Status.Registered && l.Status.Ready && !l.Status.Heartbeat.Before(l.Last) {
			continue // it started and posts its status: restarted on purpose, not looping
		}
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}
