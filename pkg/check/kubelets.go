// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/kubelet"
)

// SrcNodeEvents are the kubelets' "Starting kubelet." Events (reason Starting, on the Node).
const SrcNodeEvents = "node-events"

const idKubeletCrashLoop = "kubelet-crashloop"

// checkKubeletRestarts raises kubelet-crashloop for each node whose kubelet restarts in a loop
// (kubelet.Loops: kubelet.LoopStarts starts in kubelet.LoopWindow and no Ready status posted
// since its last start, or its Node never registered).
func checkKubeletRestarts(s *Snapshot) []finding.Finding {
	status := map[string]kubelet.Status{}
	for _, n := range s.Nodes {
		status[n.Name] = kubelet.Status{Registered: true, Ready: n.Ready, Heartbeat: n.Heartbeat}
	}
	cause := crashLoopCause(s.Cloud)
	var out []finding.Finding
	for _, l := range kubelet.Loops(s.KubeletStarts, status, s.Now) {
		state := "it never registered its Node"
		if l.Status.Registered {
			state = "it has not posted its node's status since"
			if !l.Status.Heartbeat.IsZero() {
				state += fmt.Sprintf(" (last heartbeat %s before its last start)", l.Last.Sub(l.Status.Heartbeat).Round(time.Second))
			}
		}
		msg := fmt.Sprintf("the kubelet of node %s started %d times in the last %s and %s: it exits at start-up "+
			"(it cannot build its Node object) and its service starts it again; %s",
			l.Node, l.Starts, kubelet.LoopWindow, state, cause)
		f := finding.New(idKubeletCrashLoop, msg,
			finding.Evidence{Key: "kubelet starts (Starting Events)", Value: fmt.Sprint(l.Starts)},
			finding.Evidence{Key: "last start", Value: l.Last.UTC().Format(time.RFC3339)},
			finding.Evidence{Key: "node registered", Value: fmt.Sprint(l.Status.Registered)})
		f.Object = "node/" + l.Node
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
