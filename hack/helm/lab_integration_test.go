// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package helm

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/watch"
)

// warnings collects the apiserver's warning headers (PodSecurity's "would violate" among them).
type warnings struct {
	mu  sync.Mutex
	got []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.got
	w.got = nil
	return out
}

type applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func (a *applier) create(ctx context.Context, o *unstructured.Unstructured, dryRun bool) error {
	gvk := o.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	opts := metav1.CreateOptions{FieldValidation: "Strict"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var ri dynamic.ResourceInterface = a.dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = a.dyn.Resource(m.Resource).Namespace(o.GetNamespace())
	}
	_, err = ri.Create(ctx, o, opts)
	return err
}

// TestIntegrationChartDryRun renders the chart (ServiceMonitor and PrometheusRule on) and creates
// every object with dryRun=All and strict field validation on a lab's real kube-apiserver, in a
// namespace that warns on PodSecurity "restricted": no error, no warning. Then it creates the
// chart's service accounts and RBAC for real and runs the watcher as its service account (see
// runWatcher); SubjectAccessReviews show it may do nothing beyond that.
func TestIntegrationChartDryRun(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 1})
	ctx := context.Background()
	w := &warnings{}
	rc := l.RESTConfig()
	rc.WarningHandler = w
	cs := kubernetes.NewForConfigOrDie(rc)
	a := &applier{dyn: dynamic.NewForConfigOrDie(rc),
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))}
	const ns = "credwatch"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	installCRDs(t, a)

	objs := render(t, ns, map[string]any{"serviceMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true}})
	for _, o := range objs {
		if err := a.create(ctx, o, true); err != nil {
			t.Errorf("dry-run %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	if got := w.take(); len(got) != 0 {
		t.Errorf("the apiserver warned on the rendered chart:\n%s", strings.Join(got, "\n"))
	}
	t.Run("an unhardened pod is caught", func(t *testing.T) {
		bare := render(t, ns, map[string]any{"podSecurityContext": nil, "securityContext": nil}) // null drops the defaults
		if err := a.create(ctx, find(bare, "Deployment")[0], true); err != nil {
			t.Fatal(err)
		}
		if got := w.take(); !strings.Contains(strings.Join(got, "\n"), "would violate PodSecurity") {
			t.Errorf("no PodSecurity warning for a Deployment without security contexts: %q", got)
		}
	})

	t.Run("rbac", func(t *testing.T) {
		for _, o := range objs {
			switch o.GetKind() {
			case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
				if err := a.create(ctx, o, false); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatalf("create %s %s: %v", o.GetKind(), o.GetName(), err)
				}
			}
		}
		user := "system:serviceaccount:" + ns + ":credwatch"
		sa := rest.CopyConfig(l.RESTConfig())
		sa.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
		if _, err := l.AddMember(ctx, lab.MemberOptions{SAKey: lab.SAKeyNew}); err != nil {
			t.Fatalf("AddMember: %v", err)
		}
		labtest.WaitEndpointSlice(t, l, len(l.Members()))
		runWatcher(t, sa, ns, len(l.Members()), cs)
		for _, tc := range []struct {
			attrs authzv1.ResourceAttributes
			want  bool
		}{
			{authzv1.ResourceAttributes{Verb: "create", Resource: "events", Namespace: "kube-system"}, true},
			{authzv1.ResourceAttributes{Verb: "patch", Resource: "events", Namespace: "default"}, true},
			{authzv1.ResourceAttributes{Verb: "get", Resource: "pods", Subresource: "log", Namespace: "kube-system", Name: "kube-apiserver-x"}, true},
			{authzv1.ResourceAttributes{Verb: "get", Resource: "pods", Subresource: "log", Namespace: "default", Name: "app"}, false},
			{authzv1.ResourceAttributes{Verb: "list", Resource: "secrets"}, false},
			{authzv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: "kube-system", Name: "cloud-config"}, false},
			{authzv1.ResourceAttributes{Verb: "list", Resource: "pods"}, false},
			{authzv1.ResourceAttributes{Verb: "create", Resource: "serviceaccounts", Subresource: "token", Namespace: ns, Name: "default"}, false},
			{authzv1.ResourceAttributes{Verb: "create", Resource: "events", Namespace: ns}, false},
		} {
			sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
				User: user, Groups: sa.Impersonate.Groups, ResourceAttributes: &tc.attrs}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if sar.Status.Allowed != tc.want {
				t.Errorf("%s %s/%s in %q: allowed %v, want %v", tc.attrs.Verb, tc.attrs.Resource, tc.attrs.Subresource, tc.attrs.Namespace, sar.Status.Allowed, tc.want)
			}
		}
	})
}

// runWatcher runs credwatch's watcher (pkg/watch, as `credwatch watch --events` does) for a few
// intervals as the chart's service account, on a lab whose newest member signs with a key of its
// own: every interval reads everything it asks for (no source unavailable, /metrics included),
// every member is up, and the Warning Event naming the drift is recorded.
func runWatcher(t *testing.T, sa *rest.Config, ns string, members int, admin kubernetes.Interface) {
	ev, err := watch.NewKubeEvents(sa)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var states []*watch.State
	w, err := watch.New(watch.Config{
		Check:    check.Config{REST: sa, ProbeNamespace: ns, ProbeName: "credwatch-probe", Timeout: 10 * time.Second},
		Interval: 3 * time.Second, Duration: 10 * time.Second, MetricsEvery: 1,
		Observers: []watch.Observer{ev, watch.ObserverFunc(func(s *watch.State, _ []watch.Event) {
			mu.Lock()
			defer mu.Unlock()
			states = append(states, s)
		})}})
	if err != nil {
		t.Fatal(err)
	}
	sum := w.Run(context.Background())
	ev.Stop()
	if sum.Intervals < 2 {
		t.Fatalf("%d intervals", sum.Intervals)
	}
	for _, s := range states {
		if len(s.Sources) != 0 {
			t.Errorf("interval %d: the watcher could not fetch %v", s.Interval, s.Sources)
		}
		up := 0
		for _, m := range s.Members {
			if m.Up {
				up++
			}
		}
		if up != members {
			t.Errorf("interval %d: %d of %d members up: %+v", s.Interval, up, members, s.Members)
		}
	}
	if !anyFinding(sum, "member-key-drift") {
		t.Errorf("the watcher did not see the key drift: %v", sum.Findings)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		list, err := admin.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "reason=MemberKeyDrift"})
		if err == nil && len(list.Items) > 0 {
			t.Logf("Event recorded as the watcher: %s %s: %s", list.Items[0].Type, list.Items[0].Reason, list.Items[0].Message)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no MemberKeyDrift Event in default after 30 s (err %v)", err)
		}
	}
}

func anyFinding(sum watch.Summary, id string) bool {
	for _, f := range sum.Findings {
		if f.ID == id {
			return true
		}
	}
	return false
}

// installCRDs installs stand-ins for the Prometheus Operator's CRDs (kind and group only, any
// spec) so the ServiceMonitor and PrometheusRule can be dry-run.
func installCRDs(t *testing.T, a *applier) {
	for _, k := range [][2]string{{"ServiceMonitor", "servicemonitors"}, {"PrometheusRule", "prometheusrules"}} {
		var crd unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[2]s.monitoring.coreos.com}
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: %[1]s, plural: %[2]s, listKind: %[1]sList, singular: %[3]s}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, k[0], k[1], strings.TrimSuffix(k[1], "s"))), &crd.Object); err != nil {
			t.Fatal(err)
		}
		if err := a.create(context.Background(), &crd, false); err != nil {
			t.Fatalf("CRD %s: %v", k[1], err)
		}
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Second) {
		a.mapper.Reset()
		_, err1 := a.mapper.RESTMapping(schema.GroupKind{Group: "monitoring.coreos.com", Kind: "ServiceMonitor"}, "v1")
		_, err2 := a.mapper.RESTMapping(schema.GroupKind{Group: "monitoring.coreos.com", Kind: "PrometheusRule"}, "v1")
		if err1 == nil && err2 == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRDs not served after 60 s: %v %v", err1, err2)
		}
	}
}
