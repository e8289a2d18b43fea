// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package podtenant runs the lab's tenants as real pods: a Deployment of the tenant workload
// (hack/labimages/tenant) whose containers read the token the kubelet projected and call the API
// through the kubernetes Service, one JSON line per call naming the member that served it. ReadTally
// reads those lines back through the apiserver (pod logs, served by the kubelets) and counts them
// with tally.Tally, as the in-process tenants count theirs.
package podtenant

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/net/http2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	labimage "github.com/credwatch/credwatch/pkg/lab/image"
	"github.com/credwatch/credwatch/pkg/lab/tally"
	"github.com/credwatch/credwatch/pkg/lab/workload"
)

// Options configures the tenant Deployment.
type Options struct {
	Namespace string        // default "tenants"
	Name      string        // the Deployment, default "tenant"
	Replicas  int32         // default 2: one per node (topology spread on the hostname)
	Interval  time.Duration // between two calls of one pod, default 500 ms
}

func (o *Options) complete() {
	if o.Namespace == "" {
		o.Namespace = "tenants"
	}
	if o.Name == "" {
		o.Name = "tenant"
	}
	if o.Replicas == 0 {
		o.Replicas = 2
	}
	if o.Interval == 0 {
		o.Interval = 500 * time.Millisecond
	}
}

// Deploy creates (or updates) the namespace and the Deployment, and waits until every replica
// is Running and ready, bounded by ctx. It returns the running pods.
func Deploy(ctx context.Context, cs kubernetes.Interface, o Options) ([]corev1.Pod, error) {
	o.complete()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s: %w", o.Namespace, err)
	}
	d := deployment(o)
	if _, err := cs.AppsV1().Deployments(o.Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create deployment %s/%s: %w", o.Namespace, o.Name, err)
		}
	}
	return WaitRunning(ctx, cs, o)
}

// WaitRunning waits until the Deployment's pods are Running and ready (as many as its replicas).
func WaitRunning(ctx context.Context, cs kubernetes.Interface, o Options) ([]corev1.Pod, error) {
	o.complete()
	sel := labels.SelectorFromSet(labels.Set{"app": o.Name}).String()
	var last string
	for {
		pods, err := cs.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err == nil {
			var ready []corev1.Pod
			var states []string
			for _, p := range pods.Items {
				states = append(states, fmt.Sprintf("%s %s on %q", p.Name, p.Status.Phase, p.Spec.NodeName))
				if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && podReady(p) {
					ready = append(ready, p)
				}
			}
			last = strings.Join(states, ", ")
			if len(ready) >= int(o.Replicas) {
				return ready, nil
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("tenant pods not running: %w (pods: %s)", ctx.Err(), last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func deployment(o Options) *appsv1.Deployment {
	lbl := map[string]string{"app": o.Name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: lbl},
		Spec: appsv1.DeploymentSpec{
			Replicas: &o.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: lbl},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec: corev1.PodSpec{
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
						MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule,
						LabelSelector: &metav1.LabelSelector{MatchLabels: lbl},
					}},
					Containers: []corev1.Container{{
						Name: "tenant", Image: labimage.TenantRef, ImagePullPolicy: corev1.PullNever,
						Args: []string{"--interval=" + o.Interval.String(), "--summary=10s"},
						SecurityContext: &corev1.SecurityContext{
							RunAsNonRoot: ptr(true), AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// ReadTally reads every tenant pod's log (through the apiserver, from the kubelet) and counts the
// calls answered at or after since, per member and per pod (with its node). The lab's scenarios change etcd's membership under it, and a
// list that lands in an etcd leader election times out (504) or is refused (503, 429): such a read
// is tried again, up to five times, 2 s apart. So is one the load balancer sent to a member whose
// etcd member is gone: its apiserver aborts the stream (HTTP/2 RST_STREAM INTERNAL_ERROR) when
// the storage call under the list dies.
func ReadTally(ctx context.Context, cs kubernetes.Interface, o Options, since time.Time) (tally.Snapshot, error) {
	var t tally.Snapshot
	err := retry.OnError(wait.Backoff{Steps: 5, Duration: 2 * time.Second, Factor: 1}, transient, func() (err error) {
		t, err = readTally(ctx, cs, o, since)
		return err
	})
	return t, err
}

// transient is a server answer that says "not now" rather than "no".
func transient(err error) bool {
	var se http2.StreamError
	if errors.As(err, &se) && se.Code == http2.ErrCodeInternal {
		return true
	}
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err)
}

func readTally(ctx context.Context, cs kubernetes.Interface, o Options, since time.Time) (tally.Snapshot, error) {
	o.complete()
	var t tally.Tally
	t.Reset(since)
	sel := labels.SelectorFromSet(labels.Set{"app": o.Name}).String()
	pods, err := cs.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return tally.Snapshot{}, fmt.Errorf("list tenant pods: %w", err)
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		st := metav1.NewTime(since.Add(-time.Second))
		raw, err := cs.CoreV1().Pods(o.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{SinceTime: &st}).DoRaw(ctx)
		if err != nil {
			return tally.Snapshot{}, fmt.Errorf("log of tenant pod %s: %w", p.Name, err)
		}
		running++
		t.PodOn(p.Name, p.Spec.NodeName)
		sc := bufio.NewScanner(strings.NewReader(string(raw)))
		sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
		for sc.Scan() {
			l, err := workload.ParseLine(sc.Bytes())
			if err != nil || l.Call == nil || l.Call.Time.Before(since) {
				continue
			}
			if l.Call.Pod == "" {
				l.Call.Pod = p.Name
			}
			l.Call.AddTo(&t)
		}
	}
	t.SetPods(running)
	s := t.Snapshot()
	s.Namespace = o.Namespace
	return s, nil
}
