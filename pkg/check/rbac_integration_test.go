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
)

// applyManifest creates the objects of deploy/clusterrole.yaml (Namespace, ServiceAccount, ClusterRole).
func applyManifest(t *testing.T, cs kubernetes.Interface) rbacv1.ClusterRole {
	_, file, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "deploy", "clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var role rbacv1.ClusterRole
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
			mustUnmarshal(t, doc, &role)
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{})
		default:
			t.Fatalf("manifest: unexpected kind %q", meta.Kind)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("apply %s: %v", meta.Kind, err)
		}
	}
	return role
}

func mustUnmarshal(t *testing.T, doc string, v any) {
	if err := yaml.UnmarshalStrict([]byte(doc), v); err != nil {
		t.Fatalf("manifest: %v", err)
	}
}

func bind(t *testing.T, cs kubernetes.Interface, role rbacv1.ClusterRole, user string) {
	ctx := context.Background()
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
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
	role := applyManifest(t, cs)
	bind(t, cs, role, "credwatch-checker")

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

	// Without secrets, leases, nodes and /metrics: those checks are skipped, the core ones run,
	// the exit code stays 0 (documented: optional checks do not make the result partial).
	limited := role.DeepCopy()
	limited.ObjectMeta = metav1.ObjectMeta{Name: "credwatch-check-limited"}
	limited.Rules = nil
	for _, r := range role.Rules {
		if len(r.NonResourceURLs) > 0 {
			r.NonResourceURLs = []string{"/version", "/.well-known/openid-configuration", "/openid/v1/jwks"}
			limited.Rules = append(limited.Rules, r)
			continue
		}
		if keep := strings.Join(r.Resources, ",") != "secrets" && strings.Join(r.Resources, ",") != "leases" && strings.Join(r.Resources, ",") != "nodes"; keep {
			limited.Rules = append(limited.Rules, r)
		}
	}
	bind(t, cs, *limited, "credwatch-limited")
	t.Run("without-secrets-leases-nodes-metrics", func(t *testing.T) {
		out, code := e.command(t, "-o", "json", "--as", "credwatch-limited")
		skipped, r := skippedChecks(t, out)
		for _, want := range []string{"legacy-tokens", "controllers", "nodes", "stale-tokens"} {
			if !strings.Contains(skipped[want], "forbidden") {
				t.Errorf("check %s: skipped reason %q, want a forbidden error", want, skipped[want])
			}
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
		_ = r.WriteTable(&table)
		if !strings.Contains(table.String(), "check-skipped") {
			t.Errorf("table does not list skipped checks:\n%s", table.String())
		}
	})
}
