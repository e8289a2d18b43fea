// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/finding"
)

// SrcNodeEvents are the kubelets' "Starting kubelet." Events (reason Starting, on the Node).
const SrcNodeEvents = "node-events"

const idKubeletCrashLoop = "kubelet-crashloop"

// A kubelet that started crashLoopStarts times in crashLoopWindow, and has not posted its node's
// status since, is crash-looping: systemd's kubelet.service (Restart=always, RestartSec=10 s)
// starts it about every 10 s while it exits at start-up.
const (
	crashLoopWindow = 10 * time.Minute
	crashLoopStarts = 3
)

// KubeletStart is one Event of a kubelet's start: Count starts of node Node, the last at Last.
type KubeletStart struct {
	Node  string
	Last  time.Time
	Count int
}

// listKubeletStarts pages through the Nodes' Starting Events the kubelets record at every start
// (BirthCry: "Starting kubelet."); kube-proxy's Starting Events are left out.
func listKubeletStarts(ctx context.Context, c *Config, cs kubernetes.Interface) ([]KubeletStart, error) {
	var out []KubeletStart
	opts := metav1.ListOptions{Limit: pageSize, FieldSelector: "involvedObject.kind=Node,reason=Starting"}
	for {
		ctx1, cancel := context.WithTimeout(ctx, c.Timeout)
		list, err := cs.CoreV1().Events("").List(ctx1, opts)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("list node Events: %w", err)
		}
		for _, e := range list.Items {
			if st, ok := kubeletStart(e); ok {
				out = append(out, st)
			}
		}
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

// kubeletStart reads a kubelet's Starting Event.
func kubeletStart(e corev1.Event) (KubeletStart, bool) {
	if e.Reason != "Starting" || e.InvolvedObject.Kind != "Node" ||
		e.Source.Component != "kubelet" && e.ReportingController != "kubelet" {
		return KubeletStart{}, false
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
	return KubeletStart{Node: e.InvolvedObject.Name, Last: last, Count: max(1, int(e.Count))}, true
}

// checkKubeletRestarts raises kubelet-crashloop for each node whose kubelet started at least
// crashLoopStarts times in the last crashLoopWindow and has not posted a Ready status since its
// last start (or never registered its Node).
func checkKubeletRestarts(s *Snapshot) []finding.Finding {
	type starts struct {
		n    int
		last time.Time
	}
	byNode := map[string]*starts{}
	for _, st := range s.KubeletStarts {
		if st.Last.Before(s.Now.Add(-crashLoopWindow)) {
			continue
		}
		b := byNode[st.Node]
		if b == nil {
			b = &starts{}
			byNode[st.Node] = b
		}
		b.n += st.Count
		if st.Last.After(b.last) {
			b.last = st.Last
		}
	}
	nodes := map[string]Node{}
	for _, n := range s.Nodes {
		nodes[n.Name] = n
	}
	cause := crashLoopCause(s.Cloud)
	var out []finding.Finding
	names := make([]string, 0, len(byNode))
	for name := range byNode {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b := byNode[name]
		if b.n < crashLoopStarts {
			continue
		}
		n, registered := nodes[name]
		if registered && n.Ready && !n.Heartbeat.Before(b.last) {
			continue // it started and posts its status: restarted on purpose, not looping
		}
		state := "it never registered its Node"
		if registered {
			state = "it has not posted its node's status since"
			if !n.Heartbeat.IsZero() {
				state += fmt.Sprintf(" (last heartbeat %s before its last start)", b.last.Sub(n.Heartbeat).Round(time.Second))
			}
		}
		msg := fmt.Sprintf("the kubelet of node %s started %d times in the last %s and %s: it exits at start-up "+
			"(it cannot build its Node object) and its service starts it again; %s",
			name, b.n, crashLoopWindow, state, cause)
		f := finding.New(idKubeletCrashLoop, msg,
			finding.Evidence{Key: "kubelet starts (Starting Events)", Value: fmt.Sprint(b.n)},
			finding.Evidence{Key: "last start", Value: b.last.UTC().Format(time.RFC3339)},
			finding.Evidence{Key: "node registered", Value: fmt.Sprint(registered)})
		f.Object = "node/" + name
		out = append(out, f)
	}
	return out
}

// crashLoopCause says what the kubelet most likely fails on: a rejected cloud credential, when
// one was found, else where to read it.
func crashLoopCause(obs *cloud.Observation) string {
	const where = `its log says why ("Kubelet failed to get node info" err=...); with an in-tree cloud provider and ` +
		`zones ([Labels]) the kubelet logs in to the cloud at every start to read the node's zone`
	if obs == nil {
		return where
	}
	var rejected []string
	for _, it := range obs.Items {
		if it.Test.Verdict == cloud.Rejected {
			rejected = append(rejected, it.Source.String())
		}
	}
	if len(rejected) == 0 {
		return where
	}
	return fmt.Sprintf("the cloud rejects the credential in %s: an in-tree provider with zones ([Labels]) logs in at every "+
		"kubelet start to read the node's zone, and the kubelet exits when the login fails", strings.Join(rejected, ", "))
}
