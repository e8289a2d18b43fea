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
// chart's service accounts and RBAC for real and checks as the watcher's service account: the
// members, the trust matrix and the static pods are all readable, and nothing beyond them is.
func TestIntegrationChartDryRun(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 2})
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
		bare := render(t, ns, map[string]any{"podSecurityContext": map[string]any{}, "securityContext": map[string]any{}})
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
		watcherFetch(t, sa, ns, len(l.Members()))
		for _, tc := range []struct {
			attrs authzv1.ResourceAttributes
			want  bool
		}{
			{authzv1.ResourceAttributes{Verb: "create", Resource: "events", Namespace: "kube-system"}, true},
			{authzv1.ResourceAttributes{Verb: "patch", Resource: "events", Namespace: "default"}, true},
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

// watcherFetch runs check's fetch as the watcher's service account: every member found and
// reachable, the trust matrix whole. What the watcher does not fetch (the inventory, leases,
// nodes, cloud credentials: check's other sources) must be forbidden to it.
// TODO(watch merged): set check.Config.MembersOnly as credwatch watch does and expect no source unavailable.
func watcherFetch(t *testing.T, sa *rest.Config, ns string, members int) {
	snap, err := check.Fetch(context.Background(), check.Config{REST: sa, ProbeNamespace: ns, ProbeName: "credwatch-probe",
		Timeout: 10 * time.Second, Cloud: check.CloudConfig{Skip: true}})
	if err != nil {
		t.Fatalf("fetch as the watcher: %v", err)
	}
	r := check.Run(snap, check.Registry())
	for _, src := range []string{"endpointslices", "static-pods", "trust-matrix", "public-issuer"} {
		if why, ok := r.Sources[src]; ok {
			t.Errorf("the watcher cannot fetch %s: %s", src, why)
		}
	}
	for _, src := range []string{"pods", "secrets", "nodes"} {
		if _, ok := r.Sources[src]; !ok {
			t.Errorf("the watcher can fetch %s, which it does not need", src)
		}
	}
	up := 0
	for _, m := range r.Members {
		if m.Reachable {
			up++
		}
	}
	if up != members || r.Matrix == nil {
		t.Fatalf("as the watcher: %d of %d members reachable, matrix %v; unavailable %v", up, members, r.Matrix != nil, r.Sources)
	}
	for _, row := range r.Matrix.Rows {
		for _, c := range row.Cells {
			if !c.Accepted {
				t.Errorf("%s → %s: %s %s", row.Via, c.Member, c.Cause, c.Message)
			}
		}
	}
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
