// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package clusterapi

import (
	"context"
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/credwatch/credwatch/internal/capifake"
	"github.com/credwatch/credwatch/pkg/check"
)

func obj(apiVersion, kind, ns, name string, labels map[string]any, fields map[string]any) *unstructured.Unstructured {
	o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": ns, "labels": labels}}
	for k, v := range fields {
		o[k] = v
	}
	return &unstructured.Unstructured{Object: o}
}

func reader(t *testing.T, objs ...runtime.Object) *Reader {
	t.Helper()
	return &Reader{Dyn: capifake.Client([]string{V1Beta1}, objs...)}
}

func secret(name string, value []byte) *unstructured.Unstructured {
	return obj("v1", "Secret", "default", name, nil, map[string]any{"data": map[string]any{"value": base64.StdEncoding.EncodeToString(value)}})
}

func TestParseRef(t *testing.T) {
	ctxNS := func() (string, error) { return "org-b", nil }
	for in, want := range map[string]string{"w1": "org-b/w1", "org-a/w1": "org-a/w1"} {
		got, err := ParseRef(in, ctxNS)
		if err != nil || got.String() != want {
			t.Errorf("ParseRef(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "a/b/c", "Org/w1", "ns/"} {
		if _, err := ParseRef(bad, ctxNS); err == nil || !strings.Contains(err.Error(), "want [NAMESPACE/]NAME") {
			t.Errorf("ParseRef(%q): err = %v", bad, err)
		}
	}
}

func TestControlPlane(t *testing.T) {
	cp := map[string]any{ClusterNameLabel: "w1", ControlPlaneLabel: ""}
	running := obj("cluster.x-k8s.io/v1beta1", "Machine", "default", "w1-cp-a", cp, map[string]any{
		"spec":   map[string]any{"version": "v1.30.14", "providerID": "lab://w1-cp-a"},
		"status": map[string]any{"phase": "Running", "nodeRef": map[string]any{"name": "w1-cp-a"}, "addresses": []any{map[string]any{"type": "InternalIP", "address": "10.200.1.100"}}},
	})
	deleting := obj("cluster.x-k8s.io/v1beta1", "Machine", "default", "w1-cp-b", cp, map[string]any{"status": map[string]any{"phase": "Deleting"}})
	deleting.SetDeletionTimestamp(&metav1.Time{Time: time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)})
	worker := obj("cluster.x-k8s.io/v1beta1", "Machine", "default", "w1-md-x", map[string]any{ClusterNameLabel: "w1"}, nil)
	other := obj("cluster.x-k8s.io/v1beta1", "Machine", "default", "w2-cp-a", map[string]any{ClusterNameLabel: "w2", ControlPlaneLabel: ""}, nil)
	kcp := obj("clusterctl.cluster.x-k8s.io/v1alpha3", "Provider", "capi-kubeadm-control-plane-system", "control-plane-kubeadm", nil,
		map[string]any{"type": "ControlPlaneProvider", "providerName": "kubeadm", "version": "v1.8.1"})
	core := obj("clusterctl.cluster.x-k8s.io/v1alpha3", "Provider", "capi-system", "cluster-api", nil,
		map[string]any{"type": "CoreProvider", "providerName": "cluster-api", "version": "v1.8.4"})

	r := reader(t, running, deleting, worker, other, kcp, core)
	got, err := r.ControlPlane(context.Background(), Ref{"default", "w1"})
	if err != nil {
		t.Fatal(err)
	}
	want := &check.ClusterAPI{Cluster: "default/w1", Version: "v1.8.1", Machines: []check.Machine{
		{Name: "w1-cp-a", Phase: "Running", NodeName: "w1-cp-a", Addresses: []string{"10.200.1.100"}, ProviderID: "lab://w1-cp-a", Version: "v1.30.14"},
		{Name: "w1-cp-b", Phase: "Deleting", Deleting: true},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ControlPlane =\n%+v\nwant\n%+v", got, want)
	}

	// Without the control-plane provider the core's version; without an inventory none.
	if v, err := reader(t, core).Version(context.Background()); v != "v1.8.4" || err != nil {
		t.Errorf("Version with the core provider only = %q, %v", v, err)
	}
	if v, err := reader(t).Version(context.Background()); v != "" || err == nil {
		t.Errorf("Version without an inventory = %q, %v", v, err)
	}
}

func TestClusterAndKubeconfig(t *testing.T) {
	cl := obj("cluster.x-k8s.io/v1beta1", "Cluster", "default", "w1", nil, nil)
	kc := `apiVersion: v1
kind: Config
clusters: [{name: w1, cluster: {server: "https://10.200.1.1:6443"}}]
users: [{name: admin, user: {token: abc}}]
contexts: [{name: w1, context: {cluster: w1, user: admin}}]
current-context: w1
`
	good := secret("w1-kubeconfig", []byte(kc))
	bad := secret("w2-kubeconfig", []byte("client-key-data: c2VjcmV0LWtleQ== {{{"))
	r := reader(t, cl, good, bad)
	ctx := context.Background()
	if _, err := r.Cluster(ctx, Ref{"default", "w1"}); err != nil {
		t.Errorf("Cluster: %v", err)
	}
	if _, err := r.Cluster(ctx, Ref{"default", "nope"}); !errors.Is(err, ErrNoCluster) || !strings.Contains(err.Error(), "default/nope") {
		t.Errorf("Cluster of a missing one: %v", err)
	}
	cfg, err := r.WorkloadREST(ctx, Ref{"default", "w1"})
	if err != nil || cfg.Host != "https://10.200.1.1:6443" {
		t.Errorf("WorkloadREST = %v, %v", cfg, err)
	}
	_, err = r.WorkloadREST(ctx, Ref{"default", "w2"})
	if err == nil || strings.Contains(err.Error(), "c2VjcmV0") || !strings.Contains(err.Error(), "w2-kubeconfig") {
		t.Errorf("WorkloadREST of a bad Secret: %v (must name it without quoting it)", err)
	}
	if _, err := r.WorkloadREST(ctx, Ref{"default", "w3"}); err == nil {
		t.Error("WorkloadREST of a missing Secret: no error")
	}
}
