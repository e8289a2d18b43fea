// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/liveness"
	"github.com/credwatch/credwatch/pkg/logs/cause"
)

// Catalogue IDs this package reports.
const (
	IDRejected      = "cloud-credential-rejected"
	IDUnreachable   = "cloud-credential-unreachable"
	IDPlaintext     = "cloud-credential-plaintext"
	IDConsumerStale = "cloud-consumer-stale"
	// IDKubeletCrashLoop is check's kubelet-crashloop, raised here for a looping kubelet found
	// reading a --config file on this host.
	IDKubeletCrashLoop = "kubelet-crashloop"
	IDConfigInvalid    = "cloud-config-invalid"
	IDControllers      = "controllers-not-running"
	IDNodesUninit      = "nodes-uninitialized"
	IDLoginFailed      = "cloud-login-failed"
)

// TaintUninitialized is the cloud provider's node taint.
const TaintUninitialized = liveness.TaintUninitialized

// logTail is how many lines of a controller's log are read for cloud errors.
const logTail = 500

// ControllerLog is what a kube-controller-manager or cloud-controller-manager shows of the cloud:
// its state (crash-looping) and the last cloud-error lines of its current and previous log.
type ControllerLog struct {
	Component Component
	Lines     []string
}

// NodeTaints are the nodes that still carry the cloud provider's taint and the Pods Pending
// behind it, sorted.
type NodeTaints struct {
	Tainted []string
	Pending []string
}

// readSymptoms reads what a rejected cloud credential does to a cluster: the controllers'
// cloud-error lines and, with health, the controllers' leases and the tainted nodes.
func (obs *Observation) readSymptoms(ctx context.Context, cs kubernetes.Interface, health bool, timeout time.Duration) []error {
	var errs []error
	if health {
		obs.Leases = []liveness.Status{}
		for _, ctl := range liveness.Controllers {
			if !ctl.Cloud {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, timeout)
			st, err := liveness.LeaseStatus(cctx, cs, ctl.Lease, obs.Time)
			cancel()
			if err != nil {
				errs = append(errs, err)
				continue
			}
			obs.Leases = append(obs.Leases, st)
		}
	}
	cl := cause.NewClassifier(catalogue.Default())
	for _, c := range obs.Components {
		if c.Kind == KubeControllerManager || c.Kind == CloudControllerManager {
			obs.Controllers = append(obs.Controllers, ControllerLog{Component: c, Lines: controllerCloudLines(ctx, cs, c, cl, timeout)})
		}
	}
	if health {
		n, err := readNodeTaints(ctx, cs, timeout)
		if err != nil {
			errs = append(errs, err)
		}
		obs.Nodes = n
	}
	return errs
}

// symptomFindings judges the symptoms obs holds: stale leases, crash-looping controllers and
// their cloud login failures, nodes left uninitialized.
func (obs *Observation) symptomFindings(secrets []string) []finding.Finding {
	var out []finding.Finding
	for _, st := range obs.Leases {
		if !st.Found || !st.Stale {
			continue
		}
		obj := "lease/" + liveness.Namespace + "/" + st.Name
		out = append(out, finding.New(IDControllers, fmt.Sprintf("%s has not renewed its lease %s/%s for %s (duration %s, last holder %s): %s",
			st.Name, liveness.Namespace, st.Name, st.Age.Round(time.Second), st.Duration, orDash(st.Holder), liveness.Stops(st.Name)),
			finding.Evidence{Object: obj, Key: "renewTime", Value: st.RenewTime.UTC().Format(time.RFC3339)},
			finding.Evidence{Object: obj, Key: "holderIdentity", Value: orDash(st.Holder)}).On("", obj))
	}
	for _, cl := range obs.Controllers {
		c, pod := cl.Component, "pod/"+cl.Component.Ref()
		if c.exitReason != "" || c.exitMessage != "" {
			c.LastExit = c.lastExit(secrets...)
		}
		if c.CrashLooping {
			f := finding.New(IDControllers, fmt.Sprintf("%s %s is crash-looping (%d restarts, last exit: %s)", c.Kind, c.Ref(), c.Restarts, orDash(c.LastExit)),
				finding.Evidence{Object: pod, Key: "restartCount", Value: fmt.Sprint(c.Restarts)}).On(c.Node, pod)
			out = append(out, withLines(f, pod, cl.Lines))
		}
		if len(cl.Lines) > 0 {
			f := finding.New(IDLoginFailed, fmt.Sprintf("%s %s logs cloud-provider failures (%d line(s)): %s", c.Kind, c.Ref(), len(cl.Lines), truncate(cl.Lines[len(cl.Lines)-1], 300, secrets...))).On(c.Node, pod)
			out = append(out, withLines(f, pod, cl.Lines))
		}
	}
	if n := obs.Nodes; n != nil && len(n.Tainted) > 0 {
		f := finding.New(IDNodesUninit, fmt.Sprintf("%d node(s) still carry %s: the cloud controller manager has not initialized them (node initialisation failures are logged at Info level, with no Event)",
			len(n.Tainted), TaintUninitialized), finding.Evidence{Key: "nodes", Value: strings.Join(n.Tainted, ",")})
		if len(n.Pending) > 0 {
			f.Message += fmt.Sprintf("; %d Pod(s) are Pending behind it", len(n.Pending))
			f.Evidence = append(f.Evidence, finding.Evidence{Key: "pending pods", Value: strings.Join(first(n.Pending, 10), ",")})
			f = f.WithSeverity(catalogue.Error)
		}
		out = append(out, f)
	}
	return out
}

func withLines(f finding.Finding, pod string, lines []string) finding.Finding {
	for _, l := range lines {
		f.Evidence = append(f.Evidence, finding.Evidence{Object: pod, Key: "log", Value: l})
	}
	return f
}

// readNodeTaints lists the nodes with the cloud provider's taint and the Pods Pending behind it.
func readNodeTaints(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) (*NodeTaints, error) {
	nodes, err := listNodes(ctx, cs, timeout)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	n := &NodeTaints{}
	for _, node := range nodes {
		for _, t := range node.Spec.Taints {
			if t.Key == TaintUninitialized {
				n.Tainted = append(n.Tainted, node.Name)
			}
		}
	}
	if len(n.Tainted) == 0 {
		return n, nil
	}
	sort.Strings(n.Tainted)
	pods, err := listPods(ctx, cs, "", timeout, metav1.ListOptions{FieldSelector: "status.phase=Pending"})
	if err != nil {
		return n, fmt.Errorf("list pending pods: %w", err)
	}
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
				liveness.BlockedByUninitialized(c.Message, liveness.ToleratesUninitialized(p.Spec.Tolerations)) {
				n.Pending = append(n.Pending, p.Namespace+"/"+p.Name)
			}
		}
	}
	sort.Strings(n.Pending)
	return n, nil
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("... %d more", len(s)-n))
	}
	return s
}

// controllerCloudLines returns the last few cloud-error lines of a controller's current and
// previous log: catalogue matches (the cause classifier) and node-lifecycle's existence check.
func controllerCloudLines(ctx context.Context, cs kubernetes.Interface, c Component, cl *cause.Classifier, timeout time.Duration) []string {
	var found []string
	for _, previous := range []bool{false, true} {
		if previous && c.Restarts == 0 {
			continue
		}
		tail := int64(logTail)
		cctx, cancel := context.WithTimeout(ctx, timeout)
		b, err := cs.CoreV1().Pods(c.Namespace).GetLogs(c.Pod, &corev1.PodLogOptions{Container: c.container, Previous: previous, TailLines: &tail}).DoRaw(cctx)
		cancel()
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			if line := sc.Text(); isCloudErrorLine(cl, line) {
				found = append(found, line)
			}
		}
	}
	if len(found) > 5 {
		found = found[len(found)-5:]
	}
	return found
}

// isCloudErrorLine: a catalogue cloud login/initialisation spelling (the cause classifier), or
// node-lifecycle's "error checking if node %s exists".
func isCloudErrorLine(cl *cause.Classifier, line string) bool {
	if strings.Contains(line, "error checking if node") {
		return true
	}
	ev, ok := cl.Classify(cause.Line{Msg: line})
	return ok && (ev.Cause == IDLoginFailed || ev.Cause == "cloud-provider-not-initialized")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
