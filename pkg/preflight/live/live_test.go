// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package live

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/internal/capifake"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/clusterapi"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
	"github.com/credwatch/credwatch/pkg/redact"
)

func obj(apiVersion, kind, ns, name string, labels map[string]any, fields map[string]any) *unstructured.Unstructured {
	md := map[string]any{"name": name, "namespace": ns}
	if labels != nil {
		md["labels"] = labels
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md}}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

func cluster(name, cpKind string) *unstructured.Unstructured {
	return obj("cluster.x-k8s.io/v1beta1", "Cluster", "default", name, nil, map[string]any{"spec": map[string]any{
		"controlPlaneRef":   map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": cpKind, "name": name + "-control-plane"},
		"infrastructureRef": map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "AWSCluster", "name": name},
	}})
}

func cpMachine(name string) *unstructured.Unstructured {
	return obj("cluster.x-k8s.io/v1beta1", "Machine", "default", name,
		map[string]any{clusterapi.ClusterNameLabel: "w1", clusterapi.ControlPlaneLabel: ""}, map[string]any{"spec": map[string]any{"version": "v1.30.4",
			"infrastructureRef": map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "AWSMachine", "name": name}}})
}

// fixture is a management cluster: w1 whole, w3 with another control plane, w4 without its
// KubeadmControlPlane, w5 with its control plane and nothing else.
func fixture(t *testing.T) (objs []runtime.Object, kid string, private string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	priv := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	pder, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	pub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pder})
	ks, err := keys.ParsePEM(pub, "pub")
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	kcp := func(name string) *unstructured.Unstructured {
		return obj("controlplane.cluster.x-k8s.io/v1beta1", "KubeadmControlPlane", "default", name+"-control-plane",
			map[string]any{clusterapi.ClusterNameLabel: name}, map[string]any{"spec": map[string]any{"replicas": int64(3), "version": "v1.30.4",
				"machineTemplate": map[string]any{"infrastructureRef": map[string]any{"kind": "AWSMachineTemplate", "name": name + "-cp-v1"}},
				"kubeadmConfigSpec": map[string]any{"clusterConfiguration": map[string]any{"apiServer": map[string]any{
					"extraArgs": map[string]any{"service-account-issuer": "https://" + name + ".example"}}}}}})
	}
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: w1, cluster: {server: \"https://w1.example:6443\"}}]\n" +
		"users: [{name: admin, user: {token: workload-token}}]\ncontexts: [{name: w1, context: {cluster: w1, user: admin}}]\ncurrent-context: w1\n"
	sa := obj("v1", "Secret", "default", "w1-sa", nil, map[string]any{"type": "cluster.x-k8s.io/secret",
		"data": map[string]any{"tls.crt": b64(pub), "tls.key": b64(priv)}})
	sa.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(priv)})
	awsMachine := obj("infrastructure.cluster.x-k8s.io/v1beta2", "AWSMachine", "default", "w1-cp-a", nil, nil)
	awsMachine.SetAnnotations(map[string]string{clonedFromName: "w1-cp-v0"})
	objs = []runtime.Object{
		cluster("w1", "KubeadmControlPlane"), kcp("w1"), cpMachine("w1-cp-a"), cpMachine("w1-cp-b"), awsMachine,
		obj("cluster.x-k8s.io/v1beta1", "Machine", "default", "w1-md-x", map[string]any{clusterapi.ClusterNameLabel: "w1"}, nil),
		obj("cluster.x-k8s.io/v1beta1", "Machine", "default", "w2-cp-a", map[string]any{clusterapi.ClusterNameLabel: "w2", clusterapi.ControlPlaneLabel: ""}, nil),
		obj("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfig", "default", "w1-cp-a", map[string]any{clusterapi.ClusterNameLabel: "w1"}, map[string]any{"spec": map[string]any{}}),
		sa, obj("v1", "Secret", "default", "w1-kubeconfig", nil, map[string]any{"data": map[string]any{"value": b64([]byte(kubeconfig))}}),
		obj("infrastructure.cluster.x-k8s.io/v1beta2", "AWSCluster", "default", "w1", nil, map[string]any{"spec": map[string]any{
			"controlPlaneLoadBalancer": map[string]any{"healthCheckProtocol": "TCP"}}}),
		obj("clusterctl.cluster.x-k8s.io/v1alpha3", "Provider", "capi-system", "cluster-api", nil, map[string]any{"type": "CoreProvider", "providerName": "cluster-api", "version": "v1.8.1"}),
		cluster("w3", "K3sControlPlane"), cluster("w4", "KubeadmControlPlane"), cluster("w5", "KubeadmControlPlane"), kcp("w5"),
	}
	return objs, ks[0].KeyID, strings.Join(strings.Split(string(priv), "\n")[1:2], "")
}

// client is a management cluster of Cluster API ≤ v1.10: v1beta1 only.
func client(objs []runtime.Object) *dynamicfake.FakeDynamicClient {
	return capifake.Client([]string{clusterapi.V1Beta1}, objs...)
}

// members answers as a workload cluster whose reachable member serves JWKS kids.
func members(t *testing.T, kids ...string) func(context.Context, *rest.Config) (*check.Snapshot, error) {
	return func(_ context.Context, rc *rest.Config) (*check.Snapshot, error) {
		if rc.Host != "https://w1.example:6443" || rc.BearerToken != "workload-token" {
			t.Errorf("workload configuration: host %q", rc.Host)
		}
		jwks := make([]check.JWK, len(kids))
		for i, k := range kids {
			jwks[i] = check.JWK{KID: k}
		}
		return &check.Snapshot{Members: []check.Member{
			{Endpoint: check.Endpoint{Name: "m1", URL: "https://10.0.0.1:6443"}, Reachable: true,
				Discovery: &check.Discovery{Issuer: "https://w1.example"}, JWKS: jwks, Flags: map[string][]string{"api-audiences": {"https://w1.example"}}},
			{Endpoint: check.Endpoint{Name: "m2", URL: "https://10.0.0.2:6443"}, Error: "dial tcp 10.0.0.2:6443: i/o timeout"},
		}}, nil
	}
}

func TestRead(t *testing.T) {
	objs, kid, private := fixture(t)
	tests := []struct {
		name    string
		cluster string
		members func(context.Context, *rest.Config) (*check.Snapshot, error)
		wantErr error
		errText string
		notes   []string // each in some note
		check   func(t *testing.T, s *input.Set)
	}{
		{name: "whole cluster, members serve another key", cluster: "w1", members: members(t, "drifted"),
			notes: []string{"AWSMachine default/w1-cp-b not read", "workload member m2 (https://10.0.0.2:6443) not reached: dial tcp"},
			check: func(t *testing.T, s *input.Set) {
				if len(s.Clusters) != 1 || len(s.KCPs) != 1 || len(s.Machines) != 3 || len(s.Configs) != 1 || len(s.LBChecks) != 1 || len(s.Providers) != 1 {
					t.Errorf("set %+v", s)
				}
				if i := slices.IndexFunc(s.Machines, func(m input.Machine) bool { return m.Name == "w1-cp-a" }); i < 0 || s.Machines[i].InfraTemplate != "w1-cp-v0" {
					t.Errorf("machine w1-cp-a lacks its provider machine's template: %+v", s.Machines)
				}
				if len(s.SASecrets) != 1 || s.SASecrets[0].KeyID != kid || s.SASecrets[0].HasPrivate {
					t.Errorf("sa Secret %+v, want kid %s and no private key", s.SASecrets, kid)
				}
				if want := []input.Served{{Member: "m1", Issuer: "https://w1.example", Audiences: []string{"https://w1.example"}, KeyIDs: []string{"drifted"}}}; !slices.EqualFunc(s.Served, want, func(a, b input.Served) bool {
					return a.Member == b.Member && a.Issuer == b.Issuer && slices.Equal(a.Audiences, b.Audiences) && slices.Equal(a.KeyIDs, b.KeyIDs)
				}) {
					t.Errorf("served %+v", s.Served)
				}
				r, err := preflight.Run(preflight.Config{Current: s, Reroll: true})
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, f := range r.Findings {
					ids = append(ids, f.ID)
					if f.ID == "sa-key-change" && !strings.Contains(f.Message, "kid:"+kid+") is not in the members' live JWKS (kid:drifted)") {
						t.Errorf("sa-key-change: %s", f.Message)
					}
				}
				slices.Sort(ids)
				if want := []string{"etcd-removed-before-drain", "lb-check-not-ready-aware", "rollout-planned", "sa-key-change"}; !slices.Equal(ids, want) {
					t.Errorf("findings %v, want %v", ids, want)
				}
			}},
		{name: "members serve the Secret's key", cluster: "w1", members: members(t, "old", kid), check: func(t *testing.T, s *input.Set) {
			r, err := preflight.Run(preflight.Config{Current: s, Reroll: true})
			if err != nil {
				t.Fatal(err)
			}
			if slices.ContainsFunc(r.Findings, func(f finding.Finding) bool { return f.ID == "sa-key-change" }) {
				t.Errorf("sa-key-change with the Secret's key served: %+v", r.Findings)
			}
		}},
		{name: "workload not reached", cluster: "w1", members: func(context.Context, *rest.Config) (*check.Snapshot, error) {
			return nil, errors.New("dial tcp: connection refused")
		}, notes: []string{"workload cluster https://w1.example:6443 not read: dial tcp: connection refused"}},
		{name: "control plane alone", cluster: "w5", notes: []string{"Secret default/w5-kubeconfig not found"}, check: func(t *testing.T, s *input.Set) {
			if len(s.KCPs) != 1 || len(s.SASecrets) != 0 || len(s.Machines) != 0 || s.Served != nil {
				t.Errorf("set %+v", s)
			}
		}},
		{name: "unknown cluster", cluster: "w9", wantErr: ErrNotFound, errText: "cluster default/w9 not found on the management cluster"},
		{name: "no KubeadmControlPlane", cluster: "w4", wantErr: ErrNotFound,
			errText: "cluster default/w4: KubeadmControlPlane default/w4-control-plane not found on the management cluster"},
		{name: "another control plane", cluster: "w3", wantErr: ErrUnsupported,
			errText: "cluster default/w3: control plane K3sControlPlane default/w3-control-plane: not a KubeadmControlPlane: preflight reads kubeadm control planes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dc := client(objs)
			known := &redact.Known{}
			called := false
			mf := func(ctx context.Context, rc *rest.Config) (*check.Snapshot, error) {
				called = true
				return tc.members(ctx, rc)
			}
			s, err := Read(context.Background(), Config{Client: dc, Name: tc.cluster, Members: mf, Known: known})
			for _, a := range dc.Actions() {
				if a.GetVerb() != "get" && a.GetVerb() != "list" {
					t.Errorf("Read wrote to the management cluster: %s %s", a.GetVerb(), a.GetResource())
				}
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || err.Error() != tc.errText {
					t.Fatalf("error %v, want %q", err, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if called != (tc.members != nil) {
				t.Errorf("members read: %v", called)
			}
			if called && known.Redact("workload-token") == "workload-token" {
				t.Error("the workload kubeconfig's token is not known to redaction")
			}
			notes := strings.Join(s.Notes, "\n")
			for _, n := range tc.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes lack %q:\n%s", n, notes)
				}
			}
			if b, _ := json.Marshal(s); strings.Contains(string(b), "PRIVATE") || strings.Contains(string(b), private) {
				t.Errorf("the Set carries the private key: %s", b)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

// asV1Beta2 is objs as Cluster API v1.11+ serves them at v1beta2: references carry apiGroup,
// the KubeadmControlPlane's infrastructureRef is under machineTemplate.spec, extraArgs a list.
func asV1Beta2(t *testing.T, objs []runtime.Object) []runtime.Object {
	t.Helper()
	toGroup := func(m map[string]any, key string) {
		r, ok := m[key].(map[string]any)
		if !ok {
			return
		}
		g := "infrastructure.cluster.x-k8s.io"
		if av, ok := r["apiVersion"].(string); ok {
			g, _, _ = strings.Cut(av, "/")
		}
		delete(r, "apiVersion")
		r["apiGroup"] = g
	}
	var out []runtime.Object
	for _, o := range objs {
		u := o.(*unstructured.Unstructured).DeepCopy()
		group, version, _ := strings.Cut(u.GetAPIVersion(), "/")
		if strings.HasSuffix(group, "cluster.x-k8s.io") && !strings.Contains(group, "clusterctl") && !strings.HasPrefix(group, "infrastructure") && version == clusterapi.V1Beta1 {
			u.SetAPIVersion(group + "/" + clusterapi.V1Beta2)
			spec, _ := u.Object["spec"].(map[string]any)
			switch u.GetKind() {
			case "Cluster", "Machine":
				toGroup(spec, "controlPlaneRef")
				toGroup(spec, "infrastructureRef")
			case "KubeadmControlPlane":
				mt := spec["machineTemplate"].(map[string]any)
				toGroup(mt, "infrastructureRef")
				mt["spec"] = map[string]any{"infrastructureRef": mt["infrastructureRef"]}
				delete(mt, "infrastructureRef")
				as := spec["kubeadmConfigSpec"].(map[string]any)["clusterConfiguration"].(map[string]any)["apiServer"].(map[string]any)
				var args []any
				for k, v := range as["extraArgs"].(map[string]any) {
					args = append(args, map[string]any{"name": k, "value": v})
				}
				as["extraArgs"] = args
			}
		}
		out = append(out, u)
	}
	return out
}

// TestReadV1Beta2: a management cluster serving v1beta2 is read at v1beta2 and gives the Set and
// the prediction a v1beta1 one gives; without discovery, a v1beta2 reference to a provider
// object (a group, no version) is a note.
func TestReadV1Beta2(t *testing.T) {
	objs, _, _ := fixture(t)
	v2 := asV1Beta2(t, objs)
	aws := []schema.GroupVersionKind{{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "AWSCluster"},
		{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "AWSMachine"}}
	read := func(served []string, mapper meta.RESTMapper, objs []runtime.Object) (*input.Set, *dynamicfake.FakeDynamicClient) {
		t.Helper()
		dc := capifake.Client(served, objs...)
		s, err := Read(context.Background(), Config{Client: dc, Mapper: mapper, Name: "w1", Members: members(t, "drifted"), Known: &redact.Known{}})
		if err != nil {
			t.Fatal(err)
		}
		return s, dc
	}
	predict := func(s *input.Set) string {
		t.Helper()
		r, err := preflight.Run(preflight.Config{Current: s, Reroll: true})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(struct {
			F []finding.Finding
			S []preflight.Step
		}{r.Findings, r.Steps})
		return string(b)
	}
	base, _ := read([]string{clusterapi.V1Beta1}, capifake.Mapper([]string{clusterapi.V1Beta1}, aws...), objs)
	want := predict(base)
	tests := []struct {
		name   string
		served []string
		mapper meta.RESTMapper
		note   string
	}{
		{name: "v1.11–v1.15, discovery", served: []string{clusterapi.V1Beta1, clusterapi.V1Beta2}, mapper: capifake.Mapper([]string{clusterapi.V1Beta2, clusterapi.V1Beta1}, aws...)},
		{name: "v1.16, discovery", served: []string{clusterapi.V1Beta2}, mapper: capifake.Mapper([]string{clusterapi.V1Beta2}, aws...)},
		{name: "v1.16, no discovery", served: []string{clusterapi.V1Beta2},
			note: "AWSCluster default/w1 not read: its apiGroup names no version and there is no discovery to find one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, dc := read(tc.served, tc.mapper, v2)
			for _, a := range dc.Actions() {
				if r := a.GetResource(); r.Version == clusterapi.V1Beta1 {
					t.Errorf("%s %s read at v1beta1 where v1beta2 is served", a.GetVerb(), r)
				}
			}
			if len(s.KCPs) != 1 || s.KCPs[0].InfraTemplate != "w1-cp-v1" || len(s.Machines) != 3 || len(s.Configs) != 1 {
				t.Fatalf("set %+v", s)
			}
			if tc.note != "" {
				if !slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, tc.note) }) {
					t.Errorf("notes %q lack %q", s.Notes, tc.note)
				}
				return
			}
			if i := slices.IndexFunc(s.Machines, func(m input.Machine) bool { return m.Name == "w1-cp-a" }); i < 0 || s.Machines[i].InfraTemplate != "w1-cp-v0" {
				t.Errorf("machine w1-cp-a lacks its provider machine's template: %+v", s.Machines)
			}
			if got := predict(s); got != want {
				t.Errorf("prediction at v1beta2\n%s\nwant (v1beta1)\n%s", got, want)
			}
		})
	}
}

// TestReadInPlace: live mode reads what decides an in-place update — the ExtensionConfigs and
// KubeadmControlPlane's manager Deployment (by clusterctl's provider label; other Deployments are
// not read) — so a roll of the current spec on a v1.14 management cluster set up for in-place
// updates predicts them.
func TestReadInPlace(t *testing.T) {
	objs, _, _ := fixture(t)
	deploy := func(name, provider, gates string) *unstructured.Unstructured {
		var labels map[string]any
		if provider != "" {
			labels = map[string]any{input.ProviderLabel: provider}
		}
		return obj("apps/v1", "Deployment", "capi-kubeadm-control-plane-system", name, labels, map[string]any{"spec": map[string]any{
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
				"name": "manager", "args": []any{"--leader-elect", "--feature-gates=" + gates}}}}}}})
	}
	ext := obj("runtime.cluster.x-k8s.io/v1beta2", "ExtensionConfig", "", "in-place-updater", nil, map[string]any{"status": map[string]any{
		"handlers": []any{map[string]any{"name": "can-update-machine.in-place-updater", "requestHook": map[string]any{"hook": "CanUpdateMachine"}}}}})
	objs = append(objs, deploy("capi-kubeadm-control-plane-controller-manager", "control-plane-kubeadm", "InPlaceUpdates=true"),
		deploy("unrelated", "", "InPlaceUpdates=false"), deploy("capi-controller-manager", "cluster-api", "InPlaceUpdates=false"), ext)
	s, err := Read(context.Background(), Config{Client: client(objs), Name: "w1", Members: members(t, "drifted"), Known: &redact.Known{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Managers) != 1 || s.Managers[0].Name != "capi-kubeadm-control-plane-controller-manager" || !s.Managers[0].Gates["InPlaceUpdates"] {
		t.Errorf("managers %+v, want KubeadmControlPlane's alone, with InPlaceUpdates on", s.Managers)
	}
	if len(s.Extensions) != 1 || !s.Extensions[0].Serves("CanUpdateMachine") {
		t.Errorf("extensions %+v, want in-place-updater serving CanUpdateMachine", s.Extensions)
	}
	r, err := preflight.Run(preflight.Config{Current: s, Reroll: true, CAPIVersion: "v1.14.2"})
	if err != nil {
		t.Fatal(err)
	}
	// A reroll is rolloutAfter's: no machine is eligible, and the note says so.
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "started by rolloutAfter") }) {
		t.Errorf("notes %q, want the in-place note of a rolloutAfter roll", r.Notes)
	}
}
