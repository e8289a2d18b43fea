// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/check"

	"github.com/credwatch/credwatch/pkg/report"
)

// manifest is what deploy/clusterrole.yaml defines.
type manifest struct {
	clusterRoles map[string]rbacv1.ClusterRole
	roles        []rbacv1.Role
}

// applyManifest creates the objects of deploy/clusterrole.yaml (Namespace, ServiceAccount,
// ClusterRoles, Roles).
func applyManifest(t *testing.T, cs kubernetes.Interface) manifest {
	_, file, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "deploy", "clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m := manifest{clusterRoles: map[string]rbacv1.ClusterRole{}}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("manifest: %v", err)
		}
		switch meta.Kind {
		case "Namespace":
			var o corev1.Namespace
			mustUnmarshal(t, doc, &o)
			_, err = cs.CoreV1().Namespaces().Create(ctx, &o, metav1.CreateOptions{})
		case "ServiceAccount":
			var o corev1.ServiceAccount
			mustUnmarshal(t, doc, &o)
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		case "ClusterRole":
			var o rbacv1.ClusterRole
			mustUnmarshal(t, doc, &o)
			m.clusterRoles[o.Name] = o
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, &o, metav1.CreateOptions{})
		case "Role":
			var o rbacv1.Role
			mustUnmarshal(t, doc, &o)
			m.roles = append(m.roles, o)
			_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		default:
			t.Fatalf("manifest: unexpected kind %q", meta.Kind)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("apply %s: %v", meta.Kind, err)
		}
	}
	for _, name := range []string{"credwatch-check", "credwatch-cloud-credentials", "credwatch-legacy-tokens"} {
		if _, ok := m.clusterRoles[name]; !ok {
			t.Fatalf("manifest: no ClusterRole %s", name)
		}
	}
	return m
}

func mustUnmarshal(t *testing.T, doc string, v any) {
	if err := yaml.UnmarshalStrict([]byte(doc), v); err != nil {
		t.Fatalf("manifest: %v", err)
	}
}

// bind creates role (if need be) and binds it to user cluster-wide.
func bind(t *testing.T, cs kubernetes.Interface, role rbacv1.ClusterRole, user string) {
	ctx := context.Background()
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// bindIn binds the Role or ClusterRole kind/name to user in namespace ns, as the manifest's
// `kubectl create rolebinding` lines do.
func bindIn(t *testing.T, cs kubernetes.Interface, ns, kind, name, user string) {
	b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user + "-" + name, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: kind, Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}}}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(context.Background(), b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func ensureNamespace(t *testing.T, cs kubernetes.Interface, name string) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// bindProbe grants user the probe tokens (the Role in credwatch): no core check runs without.
func bindProbe(t *testing.T, cs kubernetes.Interface, user string) {
	bindIn(t, cs, "credwatch", "Role", "credwatch-check", user)
}

func skippedChecks(t *testing.T, out string) (map[string]string, check.Report) {
	var r check.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	m := map[string]string{}
	for _, s := range r.Skipped {
		m[s.Check] = s.Reason
	}
	return m, r
}

// testRBAC runs the command as users bound to deploy/clusterrole.yaml and to less.
func testRBAC(t *testing.T, e *env) {
	cs, err := kubernetes.NewForConfig(e.l.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	m := applyManifest(t, cs)
	role := m.clusterRoles["credwatch-check"]
	// Every binding the manifest's header lists, the opt-ins included.
	bind(t, cs, role, "credwatch-checker")
	bind(t, cs, m.clusterRoles["credwatch-legacy-tokens"], "credwatch-checker")
	bindIn(t, cs, "kube-system", "Role", "credwatch-check", "credwatch-checker")
	bindIn(t, cs, "kube-system", "ClusterRole", "credwatch-cloud-credentials", "credwatch-checker")
	// The vSphere CSI driver's namespace, where check also looks for cloud credentials (the
	// manifest's header lists this binding too); the lab has no such namespace until here.
	ensureNamespace(t, cs, "vmware-system-csi")
	bindIn(t, cs, "vmware-system-csi", "ClusterRole", "credwatch-cloud-credentials", "credwatch-checker")
	bindProbe(t, cs, "credwatch-checker")

	t.Run("clusterrole", func(t *testing.T) {
		// Each member's authorizer learns the new binding from its own informer: through the load
		// balancer, the first requests may reach a member that has not seen it yet.
		var out string
		var code int
		for i := 0; i < 15; i++ {
			if out, code = e.command(t, "-o", "json", "--as", "credwatch-checker"); code == cli.ExitOK {
				if skipped, _ := skippedChecks(t, out); len(skipped) == 0 {
					break
				}
			}
			time.Sleep(time.Second)
		}
		skipped, r := skippedChecks(t, out)
		if code != cli.ExitOK || len(skipped) > 0 || r.Matrix == nil {
			t.Errorf("bound to deploy/clusterrole.yaml: exit %d, skipped %v", code, skipped)
		}
	})

	// Only credwatch-check, without nodes and /metrics, and the probe Role; no opt-in and not the
	// kube-system Role: the legacy inventory (secrets), leases, nodes and metrics checks are
	// skipped, the core ones run, the exit code stays 0 (documented: optional checks do not make
	// the result partial).
	limited := role.DeepCopy()
	limited.ObjectMeta = metav1.ObjectMeta{Name: "credwatch-check-limited"}
	limited.Rules = nil
	for _, r := range role.Rules {
		if len(r.NonResourceURLs) > 0 {
			r.NonResourceURLs = []string{"/version", "/.well-known/openid-configuration", "/openid/v1/jwks"}
			limited.Rules = append(limited.Rules, r)
			continue
		}
		if strings.Join(r.Resources, ",") != "nodes" {
			limited.Rules = append(limited.Rules, r)
		}
	}
	bind(t, cs, *limited, "credwatch-limited")
	bindProbe(t, cs, "credwatch-limited")
	t.Run("without-secrets-leases-nodes-metrics", func(t *testing.T) {
		out, code := e.command(t, "-o", "json", "--as", "credwatch-limited")
		skipped, r := skippedChecks(t, out)
		for _, want := range []string{"legacy-tokens", "controllers", "nodes", "stale-tokens"} {
			if !strings.Contains(skipped[want], "forbidden") {
				t.Errorf("check %s: skipped reason %q, want a forbidden error", want, skipped[want])
			}
		}
		if !strings.Contains(skipped["legacy-tokens"], "credwatch-legacy-tokens") {
			t.Errorf("legacy-tokens: skipped reason %q does not name the opt-in ClusterRole", skipped["legacy-tokens"])
		}
		if _, ok := skipped["key-drift"]; ok || r.Partial {
			t.Errorf("core checks skipped: %v partial=%v", skipped, r.Partial)
		}
		if code != cli.ExitOK {
			t.Errorf("exit %d, want 0", code)
		}
	})

	// Without tokenreviews the trust matrix cannot be built: core checks are skipped, exit 3.
	noReview := limited.DeepCopy()
	noReview.Name = "credwatch-check-noreview"
	noReview.Rules = nil
	for _, r := range limited.Rules {
		if len(r.APIGroups) == 1 && r.APIGroups[0] == "authentication.k8s.io" {
			continue
		}
		noReview.Rules = append(noReview.Rules, r)
	}
	bind(t, cs, *noReview, "credwatch-noreview")
	bindProbe(t, cs, "credwatch-noreview")
	t.Run("without-tokenreviews", func(t *testing.T) {
		out, code := e.command(t, "-o", "json", "--as", "credwatch-noreview")
		skipped, r := skippedChecks(t, out)
		if !strings.Contains(skipped["key-drift"], "forbidden") || !r.Partial {
			t.Errorf("key-drift skipped %q, partial=%v", skipped["key-drift"], r.Partial)
		}
		if code != cli.ExitUnreachable {
			t.Errorf("exit %d, want 3", code)
		}
		var table bytes.Buffer
		_ = r.WriteTable(&table, report.TableOptions{})
		if !strings.Contains(table.String(), "check-skipped") {
			t.Errorf("table does not list skipped checks:\n%s", table.String())
		}
	})
}
