// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
	"github.com/credwatch/credwatch/pkg/report"
)

// toV1Beta2 rewrites the v1beta1 Cluster API objects of a YAML stream as Cluster API v1.14
// serves them at v1beta2 (cluster-api@v1.14.0 api/core/v1beta2, api/controlplane/kubeadm/v1beta2,
// api/bootstrap/kubeadm/v1beta2 and their v1beta1 conversion.go): references carry apiGroup,
// spec.rollout.{after,strategy}, machineTemplate.spec.infrastructureRef, extraArgs a list sorted
// by name (ConvertToArgs). Other documents are kept as they are.
func toV1Beta2(t *testing.T, data []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, doc := range input.Documents(data) {
		var o map[string]any
		if err := yaml.Unmarshal(doc, &o); err != nil {
			t.Fatal(err)
		}
		convertObject(t, o)
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return out.Bytes()
}

func convertObject(t *testing.T, o map[string]any) {
	t.Helper()
	if items, ok := o["items"].([]any); ok {
		for _, it := range items {
			convertObject(t, it.(map[string]any))
		}
		return
	}
	av, _ := o["apiVersion"].(string)
	group, version, _ := strings.Cut(av, "/")
	// Cluster API's own groups, which moved from v1beta1 to v1beta2 in v1.11.
	capiGroups := []string{"cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io"}
	if !slices.Contains(capiGroups, group) || version != "v1beta1" {
		return
	}
	o["apiVersion"] = group + "/v1beta2"
	spec, _ := o["spec"].(map[string]any)
	if spec == nil {
		return
	}
	switch o["kind"] {
	case "Cluster":
		convertRef(spec, "controlPlaneRef")
		convertRef(spec, "infrastructureRef")
	case "Machine":
		convertRef(spec, "infrastructureRef")
		if b, ok := spec["bootstrap"].(map[string]any); ok {
			convertRef(b, "configRef")
		}
	case "KubeadmControlPlane":
		rollout := map[string]any{}
		if v, ok := spec["rolloutAfter"]; ok {
			rollout["after"] = v
			delete(spec, "rolloutAfter")
		}
		if v, ok := spec["rolloutStrategy"]; ok {
			rollout["strategy"] = v
			delete(spec, "rolloutStrategy")
		}
		if len(rollout) > 0 {
			spec["rollout"] = rollout
		}
		if mt, ok := spec["machineTemplate"].(map[string]any); ok {
			convertRef(mt, "infrastructureRef")
			if ref, ok := mt["infrastructureRef"]; ok {
				mt["spec"] = map[string]any{"infrastructureRef": ref}
				delete(mt, "infrastructureRef")
			}
		}
		convertSpec(t, spec["kubeadmConfigSpec"])
	case "KubeadmConfig":
		convertSpec(t, spec)
	case "KubeadmConfigTemplate":
		if tpl, ok := spec["template"].(map[string]any); ok {
			convertSpec(t, tpl["spec"])
		}
	}
}

// convertRef replaces a reference's apiVersion by its apiGroup; a reference without one (the
// testdata's often lack it) takes the group its kind lives in.
func convertRef(parent map[string]any, key string) {
	ref, ok := parent[key].(map[string]any)
	if !ok {
		return
	}
	av, _ := ref["apiVersion"].(string)
	delete(ref, "apiVersion")
	group, _, _ := strings.Cut(av, "/")
	if group == "" {
		kind, _ := ref["kind"].(string)
		switch {
		case strings.HasPrefix(kind, "KubeadmControlPlane"):
			group = "controlplane.cluster.x-k8s.io"
		case strings.HasPrefix(kind, "KubeadmConfig"):
			group = "bootstrap.cluster.x-k8s.io"
		default:
			group = "infrastructure.cluster.x-k8s.io"
		}
	}
	ref["apiGroup"] = group
}

// convertSpec rewrites a KubeadmConfigSpec: extraArgs maps become sorted lists, the API server's
// timeoutForControlPlane becomes init/joinConfiguration.timeouts seconds
// (bootstrap/kubeadm/webhooks/conversion/kubeadmconfig.go), and the fields v1beta2 dropped go
// (networking, kubernetesVersion: taken from the Cluster and the KCP).
func convertSpec(t *testing.T, v any) {
	t.Helper()
	spec, ok := v.(map[string]any)
	if !ok {
		return
	}
	delete(spec, "useExperimentalRetryJoin")
	if cc, ok := spec["clusterConfiguration"].(map[string]any); ok {
		if n, ok := cc["networking"].(map[string]any); ok && n["dnsDomain"] != nil {
			t.Fatal("clusterConfiguration.networking.dnsDomain moves to the Cluster in v1beta2: not converted here")
		}
		delete(cc, "networking")
		delete(cc, "kubernetesVersion")
		if as, ok := cc["apiServer"].(map[string]any); ok && as["timeoutForControlPlane"] != nil {
			d, err := time.ParseDuration(as["timeoutForControlPlane"].(string))
			if err != nil {
				t.Fatal(err)
			}
			delete(as, "timeoutForControlPlane")
			for _, c := range []string{"initConfiguration", "joinConfiguration"} {
				sec, _ := spec[c].(map[string]any)
				if sec == nil {
					sec = map[string]any{}
					spec[c] = sec
				}
				sec["timeouts"] = map[string]any{"controlPlaneComponentHealthCheckSeconds": int(d.Seconds())}
			}
		}
	}
	convertArgs(spec)
}

func convertArgs(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if m, ok := e.(map[string]any); ok && (k == "extraArgs" || k == "kubeletExtraArgs") {
				var l []any
				for _, name := range slices.Sorted(maps.Keys(m)) {
					l = append(l, map[string]any{"name": name, "value": m[name]})
				}
				x[k] = l
				continue
			}
			convertArgs(e)
		}
	case []any:
		for _, e := range x {
			convertArgs(e)
		}
	}
}

// pairDirs are the current/planned pairs with Cluster API objects: the testdata's and the shared
// corpus's (when it is there).
func pairDirs(t *testing.T) []string {
	t.Helper()
	dirs := []string{"kcp-issuer-switch", "kcp-placeholder", "kcp-rollout-after", "labcluster-tls"}
	for i, d := range dirs {
		dirs[i] = filepath.Join("testdata", d)
	}
	if es, err := os.ReadDir(corpus); err == nil {
		for _, e := range es {
			if e.IsDir() && (strings.HasPrefix(e.Name(), "kcp-") || strings.HasPrefix(e.Name(), "capa-") || strings.HasPrefix(e.Name(), "cluster-aws-")) {
				dirs = append(dirs, filepath.Join(corpus, e.Name()))
			}
		}
	}
	return dirs
}

// load reads file as it is, or as toV1Beta2 rewrites it, under its own name.
func load(t *testing.T, file string, v1beta2 bool) *input.Set {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if v1beta2 {
		b = toV1Beta2(t, b)
	}
	s := &input.Set{}
	if err := s.Add(file, b); err != nil {
		t.Fatalf("v1beta2 %v: %v", v1beta2, err)
	}
	return s
}

// comparable is a report as JSON without the lines of the files: rewriting a file moves them.
func comparable(t *testing.T, r *preflight.Report) string {
	t.Helper()
	for i := range r.Findings {
		if l := r.Findings[i].Location; l != nil {
			c := *l
			c.Line = 0
			r.Findings[i].Location = &c
		}
	}
	for i := range r.Ignored {
		r.Ignored[i].Line = 0
	}
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// firstDiff is the first line where got and want differ, with its neighbours.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			lo := max(i-3, 0)
			return "line " + strconv.Itoa(i+1) + ":\n got: " + strings.Join(g[lo:min(i+2, len(g))], "\n") + "\nwant: " + strings.Join(w[lo:min(i+2, len(w))], "\n")
		}
	}
	return "lengths " + strconv.Itoa(len(g)) + " and " + strconv.Itoa(len(w))
}

// TestV1Beta1AndV1Beta2Alike: every pair with Cluster API objects predicts the same roll,
// steps, trust matrices and findings whether its objects are written as v1beta1 or v1beta2, and
// when one side is v1beta1 and the other v1beta2 (a management cluster read at v1beta2 against a
// chart that still renders v1beta1).
func TestV1Beta1AndV1Beta2Alike(t *testing.T) {
	for _, dir := range pairDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			cur, pl := filepath.Join(dir, "current.yaml"), filepath.Join(dir, "planned.yaml")
			v1, err := preflight.Run(preflight.Config{Current: load(t, cur, false), Planned: load(t, pl, false)})
			if err != nil {
				t.Fatal(err)
			}
			want := comparable(t, v1)
			for _, tc := range []struct {
				name    string
				cur, pl bool
			}{{"v1beta2", true, true}, {"v1beta1 to v1beta2", false, true}, {"v1beta2 to v1beta1", true, false}} {
				cs, ps := load(t, cur, tc.cur), load(t, pl, tc.pl)
				for _, s := range []*input.Set{cs, ps} {
					for _, k := range s.KCPs {
						if v2 := strings.HasSuffix(k.APIVersion, "/v1beta2"); v2 != (s == cs && tc.cur || s == ps && tc.pl) {
							t.Fatalf("%s: KubeadmControlPlane read as %s", tc.name, k.APIVersion)
						}
					}
				}
				r, err := preflight.Run(preflight.Config{Current: cs, Planned: ps})
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if got := comparable(t, r); got != want {
					t.Errorf("%s: the report differs from v1beta1's: %s", tc.name, firstDiff(got, want))
				}
			}
		})
	}
}

// TestV1Beta2TemplateChange: a v1beta2 KubeadmControlPlane whose
// machineTemplate.spec.infrastructureRef changes rolls every control-plane machine, and the cause
// names both templates (it read "No machine rolls", and "→" an empty name, when preflight read
// v1beta1's paths only).
func TestV1Beta2TemplateChange(t *testing.T) {
	r := run(t, filepath.Join("testdata", "kcp-infra-template-v1beta2"), "")
	var msg string
	for _, f := range r.Findings {
		if f.ID == "rollout-planned" {
			msg = f.Message
		}
	}
	if !strings.HasPrefix(msg, "3 of 3 control-plane machines roll (infrastructure template w1-cp-v1 → w1-cp-v2)") {
		t.Errorf("rollout-planned %q", msg)
	}
	var removed []string
	for _, s := range r.Steps {
		if s.Action == "remove" {
			removed = append(removed, s.Machine)
		}
	}
	if want := []string{"w1-abcde", "w1-fghij", "w1-klmno"}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	var b bytes.Buffer
	if err := report.Print(&b, report.Wide, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "No machine rolls") || strings.Contains(b.String(), "→ )") {
		t.Errorf("report:\n%s", b.String())
	}
}
