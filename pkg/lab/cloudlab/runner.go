// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	labimage "github.com/credwatch/credwatch/pkg/lab/image"
	"github.com/credwatch/credwatch/pkg/liveness"
)

type runner struct {
	env *Env
	cs  kubernetes.Interface
	ev  *Evidence
	// logins0 is the number of login attempts when the current step began.
	logins0, accepted0 int
}

// step runs do, watches for the window and records what was seen.
func (r *runner) step(ctx context.Context, name, action string, do func(context.Context, *Step) error, until func(context.Context) bool) error {
	r.env.logf("step %s: %s", name, action)
	start := time.Now().Truncate(time.Second)
	marks := map[string][]logMark{}
	ctl, _ := filepath.Glob(r.env.ControllerLog)
	for _, f := range ctl {
		marks[r.env.Controller] = append(marks[r.env.Controller], mark(f))
	}
	for _, n := range r.env.Lab.Nodes() {
		marks["kubelet/"+n.Name] = []logMark{mark(n.Logs["kubelet"])}
	}
	acc0, rej0 := r.env.Account.Logins()
	r.logins0, r.accepted0 = acc0+rej0, acc0
	restarts0 := r.kubeletRestarts()
	s := Step{Name: name, Action: action}
	if err := do(ctx, &s); err != nil {
		return err
	}
	if err := r.watch(ctx, until); err != nil {
		return err
	}
	for _, n := range r.env.Lab.Nodes() {
		if _, ok := marks["kubelet/"+n.Name]; !ok {
			marks["kubelet/"+n.Name] = []logMark{{file: n.Logs["kubelet"]}}
		}
	}
	ctl, _ = filepath.Glob(r.env.ControllerLog)
	for _, f := range ctl {
		if !slices.ContainsFunc(marks[r.env.Controller], func(m logMark) bool { return m.file == f }) {
			marks[r.env.Controller] = append(marks[r.env.Controller], logMark{file: f})
		}
	}
	acc, rej := r.env.Account.Logins()
	s.LoginsAccepted, s.LoginsRejected = acc-acc0, rej-rej0
	s.Messages = map[string][]Count{}
	for c, ms := range marks {
		var lines []string
		for _, m := range ms {
			lines = append(lines, m.cloudLines()...)
		}
		if len(lines) > 0 {
			s.Messages[c] = count(lines)
		}
	}
	for n, k := range r.kubeletRestarts() {
		if d := k - restarts0[n]; d > 0 {
			if s.Restarts == nil {
				s.Restarts = map[string]int{}
			}
			s.Restarts["kubelet/"+n] = d
		}
	}
	for c := range s.Restarted {
		if c == r.env.Controller && r.env.ControllerStatus != nil && s.Restarted[c] == "healthy" {
			s.Restarted[c] = r.env.ControllerStatus(ctx)
		}
		if node, ok := strings.CutPrefix(c, "kubelet/"); ok {
			s.Restarted[c] = "running"
			if exited, tail, err := r.env.Lab.KubeletExited(node); exited {
				s.Restarted[c] = fmt.Sprintf("exited (%v): %s", err, lastLine(tail))
			}
		}
	}
	var err error
	if s.Deployments, err = r.workloads(ctx); err != nil {
		return err
	}
	if s.Nodes, err = r.nodes(ctx); err != nil {
		return err
	}
	if s.Events, err = r.events(ctx, start); err != nil {
		return err
	}
	if r.env.Check {
		s.Findings = r.checkFindings(ctx)
		if len(r.env.CloudConfigs) > 0 {
			s.Cloud = r.cloudFindings(ctx)
		}
	}
	r.ev.Steps = append(r.ev.Steps, s)
	return nil
}

// kubeletRestarts are how many times each node's kubelet service started it again so far.
func (r *runner) kubeletRestarts() map[string]int {
	out := map[string]int{}
	for _, n := range r.env.Lab.Nodes() {
		if k, _, err := r.env.Lab.KubeletRestarts(n.Name); err == nil {
			out[n.Name] = k
		}
	}
	return out
}

// untilMax bounds how long a step waits for its until condition after the window (a restarted
// controller first waits for the previous holder's leader lease to expire).
const untilMax = 60 * time.Second

// watch waits for the window, then (with until) until the condition holds or untilMax passes.
func (r *runner) watch(ctx context.Context, until func(context.Context) bool) error {
	deadline := time.Now().Add(r.env.window() + untilMax)
	for first := true; ; first = false {
		wait := time.Second
		if first {
			wait = r.env.window()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		if until == nil || until(ctx) || time.Now().After(deadline) {
			return nil
		}
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return normalise(s)
}

func (r *runner) ensureNamespace(ctx context.Context) error {
	_, err := r.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", Namespace, err)
	}
	return nil
}

// createDeployment creates a one-replica Deployment of the lab's pause image, on node when it is
// not "".
func (r *runner) createDeployment(ctx context.Context, name, node string) error {
	one := int32(1)
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: new(bool),
					NodeSelector:                 nodeSelector(node),
					Containers:                   []corev1.Container{{Name: "pause", Image: labimage.PauseRef, ImagePullPolicy: corev1.PullNever}},
				},
			},
		},
	}
	if _, err := r.cs.AppsV1().Deployments(Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create Deployment %s: %w", name, err)
	}
	return nil
}

// getDelete gets the Deployment's Pods and deletes one of them: "ok", or what failed.
func (r *runner) getDelete(ctx context.Context, name string) string {
	pods, err := r.cs.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		return "get: " + err.Error()
	}
	if len(pods.Items) == 0 {
		return "get: no Pods of " + name
	}
	if err := r.cs.CoreV1().Pods(Namespace).Delete(ctx, pods.Items[0].Name, metav1.DeleteOptions{}); err != nil {
		return "delete: " + err.Error()
	}
	return "ok"
}

func nodeSelector(node string) map[string]string {
	if node == "" {
		return nil
	}
	return map[string]string{"kubernetes.io/hostname": node}
}

func (r *runner) workloads(ctx context.Context) ([]Workload, error) {
	ds, err := r.cs.AppsV1().Deployments(Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Deployments: %w", err)
	}
	pods, err := r.cs.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Pods: %w", err)
	}
	var out []Workload
	for _, d := range ds.Items {
		w := Workload{Name: d.Name, Pods: map[string]int{}}
		for _, p := range pods.Items {
			if p.Labels["app"] == d.Name && p.DeletionTimestamp == nil {
				w.Pods[string(p.Status.Phase)]++
			}
		}
		out = append(out, w)
	}
	return out, nil
}

func (r *runner) nodes(ctx context.Context) ([]NodeState, error) {
	ns, err := r.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Nodes: %w", err)
	}
	var out []NodeState
	for _, n := range ns.Items {
		st := NodeState{Name: n.Name, ProviderID: n.Spec.ProviderID,
			Region: n.Labels[corev1.LabelTopologyRegion], Zone: n.Labels[corev1.LabelTopologyZone]}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				st.Ready = c.Status == corev1.ConditionTrue
			}
		}
		for _, t := range n.Spec.Taints {
			if t.Key == liveness.TaintUninitialized {
				st.Uninitialized = true
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// routineEvent are the reasons of Events every node start or Pod start records; the evidence
// leaves them out.
var routineEvent = map[string]bool{
	"NodeHasNoDiskPressure": true, "NodeHasSufficientMemory": true, "NodeHasSufficientPID": true,
	"NodeAllocatableEnforced": true, "Starting": true, "CgroupV1": true, "MissingClusterDNS": true,
	"Pulled": true, "Created": true, "Started": true, "Killing": true, "InvalidDiskCapacity": true,
}

// events are the Events created since start, "Reason: message" (of which object kind), counted.
func (r *runner) events(ctx context.Context, start time.Time) ([]Count, error) {
	evs, err := r.cs.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Events: %w", err)
	}
	var lines []string
	for _, e := range evs.Items {
		if e.CreationTimestamp.Time.Before(start) || routineEvent[e.Reason] {
			continue
		}
		lines = append(lines, normalise(fmt.Sprintf("%s %s %s: %s", e.Type, e.InvolvedObject.Kind, e.Reason, e.Message)))
	}
	return count(lines), nil
}

// settled holds when every node is Ready and initialized and every Pod of the scenario Runs.
func (r *runner) settled(ctx context.Context) bool {
	nodes, err := r.nodes(ctx)
	if err != nil {
		return false
	}
	for _, n := range nodes {
		if !n.Ready || n.Uninitialized {
			return false
		}
	}
	ws, err := r.workloads(ctx)
	if err != nil {
		return false
	}
	for _, w := range ws {
		if len(w.Pods) != 1 || w.Pods[string(corev1.PodRunning)] != 1 {
			return false
		}
	}
	return true
}

// readySince holds once node name is Ready in a status its kubelet posted after t: right after
// a restart the Node still shows the old kubelet's Ready, and the new kubelet reports NotReady
// until its runtime and PLEG are healthy, which on a loaded machine outlasts the window.
func (r *runner) readySince(ctx context.Context, name string, t time.Time) bool {
	n, err := r.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue && c.LastHeartbeatTime.After(t.Truncate(time.Second))
		}
	}
	return false
}

// controllerMarks are the controller's log files as they are now.
func (r *runner) controllerMarks() []logMark {
	files, _ := filepath.Glob(r.env.ControllerLog)
	out := make([]logMark, 0, len(files))
	for _, f := range files {
		out = append(out, mark(f))
	}
	return out
}

// loggedSince holds once one of the marked files has a line containing sub after its mark.
func loggedSince(ms []logMark, sub string) bool {
	for _, m := range ms {
		if logged(m.file, m.offset, sub) {
			return true
		}
	}
	return false
}

// logged holds once file has a line containing sub after offset.
func logged(file string, offset int64, sub string) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return false
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), sub) {
			return true
		}
	}
	return false
}

// loginAttempted holds once vCenter has seen a login attempt since the step began.
func (r *runner) loginAttempted(context.Context) bool {
	a, rej := r.env.Account.Logins()
	return a+rej > r.logins0
}

// loginAccepted holds once vCenter has accepted a login since the step began.
func (r *runner) loginAccepted(context.Context) bool {
	a, _ := r.env.Account.Logins()
	return a > r.accepted0
}
