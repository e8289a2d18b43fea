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
	IDConsumerStale = "cloud-consumer-stale"
	IDConfigInvalid = "cloud-config-invalid"
	IDControllers   = "controllers-not-running"
	IDNodesUninit   = "nodes-uninitialized"
	IDLoginFailed   = "cloud-login-failed"
)

// TaintUninitialized is the cloud provider's node taint (k8s.io/cloud-provider/api/well_known_taints.go).
const TaintUninitialized = "node.cloudprovider.kubernetes.io/uninitialized"

// ControllerLeases are the leases whose staleness stops cloud-dependent work.
var ControllerLeases = []string{"kube-controller-manager", "cloud-controller-manager"}

var leaseMeaning = map[string]string{
	"kube-controller-manager":  "Deployments exist, ReplicaSets will not create Pods, and no Events will say why",
	"cloud-controller-manager": "new Nodes keep the " + TaintUninitialized + " taint and Pods that do not tolerate it stay Pending",
}

// logTail is how many lines of a controller's log are read for cloud errors.
const logTail = 500

// Symptoms reads what a rejected cloud credential does to a cluster: stale controller leases,
// crash-looping KCM/CCM with cloud login errors in their logs, node-lifecycle's
// "error checking if node ... exists", and nodes left uninitialized with Pods Pending behind them.
func Symptoms(ctx context.Context, cs kubernetes.Interface, comps []Component, now time.Time, timeout time.Duration) ([]finding.Finding, []error) {
	var out []finding.Finding
	var errs []error
	call := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, timeout) }
	for _, name := range ControllerLeases {
		cctx, cancel := call()
		st, err := liveness.LeaseStatus(cctx, cs, name, now)
		cancel()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !st.Found || !st.Stale {
			continue
		}
		obj := "lease/" + liveness.Namespace + "/" + name
		out = append(out, finding.New(IDControllers, fmt.Sprintf("%s has not renewed its lease %s/%s for %s (duration %s, last holder %s): %s",
			name, liveness.Namespace, name, st.Age.Round(time.Second), st.Duration, orDash(st.Holder), leaseMeaning[name]),
			finding.Evidence{Object: obj, Key: "renewTime", Value: st.RenewTime.UTC().Format(time.RFC3339)},
			finding.Evidence{Object: obj, Key: "holderIdentity", Value: orDash(st.Holder)}).On("", obj))
	}
	cl := cause.NewClassifier(catalogue.Default())
	for _, c := range comps {
		if c.Kind != KubeControllerManager && c.Kind != CloudControllerManager {
			continue
		}
		lines := controllerCloudLines(ctx, cs, c, cl, timeout)
		if c.CrashLooping {
			f := finding.New(IDControllers, fmt.Sprintf("%s %s is crash-looping (%d restarts, last exit: %s)", c.Kind, c.Ref(), c.Restarts, orDash(c.LastExit)),
				finding.Evidence{Object: "pod/" + c.Ref(), Key: "restartCount", Value: fmt.Sprint(c.Restarts)}).On(c.Node, "pod/"+c.Ref())
			for _, l := range lines {
				f.Evidence = append(f.Evidence, finding.Evidence{Object: "pod/" + c.Ref(), Key: "log", Value: l})
			}
			out = append(out, f)
		}
		if len(lines) > 0 {
			f := finding.New(IDLoginFailed, fmt.Sprintf("%s %s logs cloud-provider failures (%d line(s)): %s", c.Kind, c.Ref(), len(lines), truncate(lines[len(lines)-1], 300))).On(c.Node, "pod/"+c.Ref())
			for _, l := range lines {
				f.Evidence = append(f.Evidence, finding.Evidence{Object: "pod/" + c.Ref(), Key: "log", Value: l})
			}
			out = append(out, f)
		}
	}
	f, err := uninitialized(ctx, cs, timeout)
	if err != nil {
		errs = append(errs, err)
	} else if f != nil {
		out = append(out, *f)
	}
	return out, errs
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

// uninitialized finds nodes with the cloud provider's taint and the Pods Pending behind it.
func uninitialized(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) (*finding.Finding, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	nodes, err := cs.CoreV1().Nodes().List(cctx, metav1.ListOptions{})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	var tainted []string
	for _, n := range nodes.Items {
		for _, t := range n.Spec.Taints {
			if t.Key == TaintUninitialized {
				tainted = append(tainted, n.Name)
			}
		}
	}
	if len(tainted) == 0 {
		return nil, nil
	}
	sort.Strings(tainted)
	f := finding.New(IDNodesUninit, fmt.Sprintf("%d node(s) still carry %s: the cloud controller manager has not initialized them (node initialisation failures are logged at Info level, with no Event)",
		len(tainted), TaintUninitialized), finding.Evidence{Key: "nodes", Value: strings.Join(tainted, ",")})
	cctx, cancel = context.WithTimeout(ctx, timeout)
	pods, err := cs.CoreV1().Pods("").List(cctx, metav1.ListOptions{FieldSelector: "status.phase=Pending"})
	cancel()
	if err != nil {
		return &f, fmt.Errorf("list pending pods: %w", err)
	}
	var pending []string
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, TaintUninitialized) {
				pending = append(pending, p.Namespace+"/"+p.Name)
			}
		}
	}
	if len(pending) > 0 {
		sort.Strings(pending)
		f.Message += fmt.Sprintf("; %d Pod(s) are Pending behind it", len(pending))
		f.Evidence = append(f.Evidence, finding.Evidence{Key: "pending pods", Value: strings.Join(first(pending, 10), ",")})
		f = f.WithSeverity(catalogue.Error)
	}
	return &f, nil
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("... %d more", len(s)-n))
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
