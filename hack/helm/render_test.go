// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package helm

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/root"
)

const chartDir = "../../deploy/helm/credwatch"

// render renders the chart as `helm install credwatch -n namespace` would, with vals over the
// chart's values (validated against values.schema.json), and returns the objects it makes.
func render(t *testing.T, namespace string, vals map[string]any) []*unstructured.Unstructured {
	t.Helper()
	objs, err := renderErr(namespace, vals)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// testImage is the image repository the tests install from: the chart has no default (no
// public image exists), and installing without one fails by design (TestNoDefaultImage).
const testImage = "registry.test/credwatch"

// withImage is vals with image.repository set to testImage unless vals sets an image.
func withImage(vals map[string]any) map[string]any {
	if _, ok := vals["image"]; ok {
		return vals
	}
	out := map[string]any{"image": map[string]any{"repository": testImage}}
	for k, v := range vals {
		out[k] = v
	}
	return out
}

func renderErr(namespace string, vals map[string]any) ([]*unstructured.Unstructured, error) {
	return renderRaw(namespace, withImage(vals))
}

// renderRaw renders with vals as given, without the test image.
func renderRaw(namespace string, vals map[string]any) ([]*unstructured.Unstructured, error) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "credwatch", Namespace: namespace, IsInstall: true},
		chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []*unstructured.Unstructured
	for _, n := range names {
		if !strings.HasSuffix(n, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(files[n], "\n---") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				return nil, err
			}
			if len(m) != 0 {
				out = append(out, &unstructured.Unstructured{Object: m})
			}
		}
	}
	return out, nil
}

func find(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// TestLint is `helm lint --strict` with the defaults and with every optional object on.
func TestLint(t *testing.T) {
	for _, vals := range []map[string]any{nil, {"serviceMonitor": map[string]any{"enabled": true}, "prometheusRule": map[string]any{"enabled": true}},
		{"prometheusRule": map[string]any{"enabled": true, "mixin": false}},
		{"prometheusRule": map[string]any{"enabled": true, "watcher": false, "apiServerSelector": `job="kube-apiserver"`}},
		{"prometheusRule": map[string]any{"enabled": true, "watcher": false, "mixin": false}}} {
		l := lint.All(chartDir, withImage(vals), "credwatch", true)
		for _, m := range l.Messages {
			if m.Severity > support.InfoSev {
				t.Errorf("helm lint (%v): %s", vals, m)
			}
		}
	}
}

// TestSchema: values.schema.json rejects what the watcher could not run with.
func TestSchema(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"unknown key":       {"intervall": "5s"},
		"bad interval":      {"watch": map[string]any{"interval": "5 seconds"}},
		"bad port":          {"watch": map[string]any{"port": 0}},
		"bad probe account": {"probeServiceAccount": map[string]any{"name": "Probe_SA"}},
		"two replicas":      {"replicaCount": 2},
		"bad nameOverride":  {"nameOverride": "Cred_Watch"},
	} {
		if _, err := renderErr("credwatch", vals); err == nil || !strings.Contains(err.Error(), "schema") {
			t.Errorf("%s: rendered (err %v), want a schema error", name, err)
		}
	}
}

// TestNoDefaultImage: installed with the chart's defaults, or with an empty repository, the
// chart refuses with a message that says what to set, instead of a Deployment whose image no
// registry has (ImagePullBackOff).
func TestNoDefaultImage(t *testing.T) {
	for name, vals := range map[string]map[string]any{"defaults": nil, "empty": {"image": map[string]any{"repository": ""}}} {
		_, err := renderRaw("credwatch", vals)
		if err == nil || !strings.Contains(err.Error(), "set image.repository to where `make image-push REGISTRY=host:port` pushed the image") {
			t.Errorf("%s: rendered (err %v), want the required image.repository message", name, err)
		}
	}
}

// TestDeployment: the watcher runs `credwatch watch` with flags the command has, hardened, with
// probes on its health endpoints and resources.
func TestDeployment(t *testing.T) {
	deps := find(render(t, "monitoring", nil), "Deployment")
	if len(deps) != 1 {
		t.Fatalf("%d Deployments", len(deps))
	}
	var d appsv1.Deployment
	if err := runtimeConvert(deps[0], &d); err != nil {
		t.Fatal(err)
	}
	ps := d.Spec.Template.Spec
	c := ps.Containers[0]
	if sc := ps.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.SeccompProfile == nil || sc.SeccompProfile.Type != "RuntimeDefault" {
		t.Errorf("pod security context: %+v", ps.SecurityContext)
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("container security context: %+v", c.SecurityContext)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("probes: liveness %+v readiness %+v", c.LivenessProbe, c.ReadinessProbe)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources: %+v", c.Resources)
	}
	want := []string{"watch", "--listen=:9090", "--events", "--pod-logs=true", "--probe-serviceaccount=monitoring/credwatch-probe"}
	for _, a := range want {
		if !slices.Contains(c.Args, a) {
			t.Errorf("args %v lack %s", c.Args, a)
		}
	}
	// the args must parse as credwatch's own command line
	cmd := root.NewCommand("credwatch", cli.Streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	sub, rest, err := cmd.Find(c.Args)
	if err != nil || sub.Name() != "watch" {
		t.Fatalf("credwatch %v: not the watch command (%v)", c.Args, err)
	}
	if err := sub.ParseFlags(rest); err != nil {
		t.Errorf("credwatch %s: %v", strings.Join(c.Args, " "), err)
	}
}

// TestPodLogsRule: pods/log is granted exactly when the watcher follows the pods' logs.
func TestPodLogsRule(t *testing.T) {
	for _, on := range []bool{true, false} {
		objs := render(t, "credwatch", map[string]any{"watch": map[string]any{"podLogs": on}})
		granted := false
		for _, r := range find(objs, "Role") {
			rules, _, _ := unstructured.NestedSlice(r.Object, "rules")
			for _, rule := range rules {
				res, _, _ := unstructured.NestedStringSlice(rule.(map[string]any), "resources")
				granted = granted || slices.Contains(res, "pods/log") && r.GetNamespace() == "kube-system"
			}
		}
		args, _, _ := unstructured.NestedSlice(find(objs, "Deployment")[0].Object, "spec", "template", "spec", "containers")
		flag := fmt.Sprintf("--pod-logs=%v", on)
		if granted != on || !slices.Contains(args[0].(map[string]any)["args"].([]any), any(flag)) {
			t.Errorf("podLogs %v: pods/log granted %v, args %v", on, granted, args[0].(map[string]any)["args"])
		}
	}
}

// TestPrometheusRule: the PrometheusRule carries the groups of files/alerts.yaml (the watcher's)
// and of files/mixin.yaml (the credential mixin's; both tested by promtool), each switchable, and
// none when both are off.
func TestPrometheusRule(t *testing.T) {
	for _, tt := range []struct {
		watcher, mixin bool
		selector       string
	}{{true, true, ""}, {true, false, ""}, {false, true, `job="kube-apiserver"`}, {false, false, ""}} {
		t.Run(fmt.Sprintf("watcher=%v,mixin=%v", tt.watcher, tt.mixin), func(t *testing.T) {
			pr := map[string]any{"enabled": true, "watcher": tt.watcher, "mixin": tt.mixin}
			if tt.selector != "" {
				pr["apiServerSelector"] = tt.selector
			}
			objs := render(t, "credwatch", map[string]any{"prometheusRule": pr, "serviceMonitor": map[string]any{"enabled": true}})
			rules, mons := find(objs, "PrometheusRule"), find(objs, "ServiceMonitor")
			if want := tt.watcher || tt.mixin; len(rules) != map[bool]int{true: 1}[want] || len(mons) != 1 {
				t.Fatalf("%d PrometheusRules, %d ServiceMonitors", len(rules), len(mons))
			}
			if len(rules) == 0 {
				return
			}
			var want []any
			if tt.watcher {
				want = append(want, ruleGroups(t, "alerts.yaml", "")...)
			}
			if tt.mixin {
				want = append(want, ruleGroups(t, "mixin.yaml", tt.selector)...)
			}
			a, _ := yaml.Marshal(want)
			got, _, _ := unstructured.NestedSlice(rules[0].Object, "spec", "groups")
			b, _ := yaml.Marshal(got)
			if !bytes.Equal(a, b) {
				t.Errorf("PrometheusRule groups differ from the files':\n%s", b)
			}
			if tt.selector != "" && (!bytes.Contains(b, []byte(tt.selector)) || bytes.Contains(b, []byte(`job="apiserver"`))) {
				t.Errorf("apiServerSelector %s not applied to every mixin rule", tt.selector)
			}
		})
	}
	if objs := render(t, "credwatch", nil); len(find(objs, "PrometheusRule"))+len(find(objs, "ServiceMonitor")) != 0 {
		t.Error("PrometheusRule or ServiceMonitor rendered by default")
	}
}

// ruleGroups are the groups of the chart's rule file name, its kube-apiserver selector replaced
// by selector when set.
func ruleGroups(t *testing.T, name, selector string) []any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(chartDir, "files", name))
	if err != nil {
		t.Fatal(err)
	}
	if selector != "" {
		raw = bytes.ReplaceAll(raw, []byte(`job="apiserver"`), []byte(selector))
	}
	var file struct {
		Groups []any `json:"groups"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Groups) == 0 {
		t.Fatalf("files/%s has no groups", name)
	}
	return file.Groups
}

// TestNameOverrides: nameOverride renames the chart in names and labels, fullnameOverride names
// every object; without them objects are named after the release.
func TestNameOverrides(t *testing.T) {
	tests := []struct {
		name     string
		vals     map[string]any
		fullname string
		label    string
	}{
		{"defaults", nil, "credwatch", "credwatch"},
		{"nameOverride", map[string]any{"nameOverride": "cw"}, "credwatch-cw", "cw"},
		{"fullnameOverride", map[string]any{"fullnameOverride": "auth-watcher"}, "auth-watcher", "credwatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := render(t, "credwatch", tt.vals)
			d := find(objs, "Deployment")
			if len(d) != 1 {
				t.Fatalf("%d Deployments, want 1", len(d))
			}
			if d[0].GetName() != tt.fullname {
				t.Errorf("Deployment %q, want %q", d[0].GetName(), tt.fullname)
			}
			if got := d[0].GetLabels()["app.kubernetes.io/name"]; got != tt.label {
				t.Errorf("label app.kubernetes.io/name %q, want %q", got, tt.label)
			}
			for _, svc := range find(objs, "Service") {
				if svc.GetName() != tt.fullname {
					t.Errorf("Service %q, want %q", svc.GetName(), tt.fullname)
				}
			}
		})
	}
}

// TestRBACScope: with every option on or off, the chart grants no Secret, keeps name-restricted
// rules in namespaced Roles, and every Role's comment says what it grants.
func TestRBACScope(t *testing.T) {
	for _, podLogs := range []bool{true, false} {
		vals := map[string]any{"watch": map[string]any{"podLogs": podLogs}}
		for _, kind := range []string{"ClusterRole", "Role"} {
			for _, r := range find(render(t, "credwatch", vals), kind) {
				rules, _, _ := unstructured.NestedSlice(r.Object, "rules")
				for _, rule := range rules {
					res, _, _ := unstructured.NestedStringSlice(rule.(map[string]any), "resources")
					names, _, _ := unstructured.NestedStringSlice(rule.(map[string]any), "resourceNames")
					if slices.Contains(res, "secrets") {
						t.Errorf("podLogs %v: %s %s grants %v on secrets", podLogs, kind, r.GetName(), rule)
					}
					if kind == "ClusterRole" && len(names) > 0 {
						t.Errorf("podLogs %v: ClusterRole %s has a name-restricted rule (it applies in every namespace): %v", podLogs, r.GetName(), rule)
					}
				}
			}
		}
		ch, err := loader.Load(chartDir)
		if err != nil {
			t.Fatal(err)
		}
		rv, err := chartutil.ToRenderValues(ch, withImage(vals), chartutil.ReleaseOptions{Name: "credwatch", Namespace: "credwatch", IsInstall: true}, chartutil.DefaultCapabilities)
		if err != nil {
			t.Fatal(err)
		}
		files, err := engine.Render(ch, rv)
		if err != nil {
			t.Fatal(err)
		}
		text := files["credwatch/templates/rbac.yaml"]
		for _, want := range []string{"in default only", "in kube-system only", "in credwatch only", "No rule grants any Secret"} {
			if !strings.Contains(text, want) {
				t.Errorf("podLogs %v: rbac.yaml lacks the comment %q", podLogs, want)
			}
		}
		if got := strings.Contains(text, "gets pods/log"); got != podLogs {
			t.Errorf("podLogs %v: the kube-system Role's comment mentions pods/log: %v", podLogs, got)
		}
	}
}
