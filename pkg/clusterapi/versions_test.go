// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package clusterapi

import (
	"context"
	"errors"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/credwatch/credwatch/internal/capifake"
)

// TestVersioned: Cluster API's kinds are read at v1beta2 where it is served and at v1beta1 only
// where it is not, whether discovery says so or a NotFound on the version does.
func TestVersioned(t *testing.T) {
	tests := []struct {
		name      string
		served    []string // what the management cluster serves, the objects created at the last
		discovery bool
		want      string
	}{
		{"Cluster API ≤ v1.10, discovery", []string{V1Beta1}, true, V1Beta1},
		{"Cluster API ≤ v1.10, NotFound", []string{V1Beta1}, false, V1Beta1},
		{"Cluster API v1.11–v1.15, discovery", []string{V1Beta1, V1Beta2}, true, V1Beta2},
		{"Cluster API v1.11–v1.15, no discovery", []string{V1Beta1, V1Beta2}, false, V1Beta2},
		{"Cluster API v1.16, discovery", []string{V1Beta2}, true, V1Beta2},
		{"Cluster API v1.16, no discovery", []string{V1Beta2}, false, V1Beta2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			av := "cluster.x-k8s.io/" + tc.served[len(tc.served)-1]
			cp := map[string]any{ClusterNameLabel: "w1", ControlPlaneLabel: ""}
			dyn := capifake.Client(tc.served, obj(av, "Cluster", "default", "w1", nil, nil),
				obj(av, "Machine", "default", "w1-cp-a", cp, map[string]any{"spec": map[string]any{"version": "v1.33.4"}}),
				obj("controlplane."+av, "KubeadmControlPlane", "default", "w1", nil, nil))
			var mapper meta.RESTMapper
			if tc.discovery {
				mapper = capifake.Mapper(tc.served)
			}
			r := &Reader{Dyn: dyn, Mapper: mapper}
			ctx := context.Background()
			if _, err := r.Cluster(ctx, Ref{"default", "w1"}); err != nil {
				t.Fatalf("Cluster: %v", err)
			}
			ca, err := r.ControlPlane(ctx, Ref{"default", "w1"})
			if err != nil || len(ca.Machines) != 1 || ca.Machines[0].Version != "v1.33.4" {
				t.Fatalf("ControlPlane = %+v, %v", ca, err)
			}
			// Another group of Cluster API, read after the first.
			if _, err := r.versioned().Get(ctx, KubeadmControlPlaneResource.GroupResource(), "default", "w1"); err != nil {
				t.Fatalf("KubeadmControlPlane: %v", err)
			}
			for _, g := range []string{ClusterResource.Group, KubeadmControlPlaneResource.Group} {
				if got := r.versioned().Served(g); got != tc.want {
					t.Errorf("%s read at %q, want %s", g, got, tc.want)
				}
			}
			for _, a := range dyn.Actions() {
				if v := a.GetResource().Version; tc.discovery && v != tc.want && v != "v1alpha3" {
					t.Errorf("with discovery, %s %s asked", a.GetVerb(), a.GetResource())
				}
			}
			if _, err := r.Cluster(ctx, Ref{"default", "nope"}); !errors.Is(err, ErrNoCluster) {
				t.Errorf("Cluster of a missing one: %v", err)
			}
		})
	}
}

// TestVersionedNotFound: a Cluster that is at no version is NotFound, after both were asked
// when nothing says which is served.
func TestVersionedNotFound(t *testing.T) {
	dyn := capifake.Client([]string{V1Beta1, V1Beta2})
	v := NewVersioned(dyn, nil)
	_, err := v.Get(context.Background(), ClusterResource.GroupResource(), "default", "w1")
	if !apierrors.IsNotFound(err) {
		t.Fatalf("err %v", err)
	}
	var asked []string
	for _, a := range dyn.Actions() {
		asked = append(asked, a.GetResource().Version)
	}
	if !slices.Equal(asked, []string{V1Beta2, V1Beta1}) || v.Served(ClusterResource.Group) != "" {
		t.Errorf("asked %v, served %q", asked, v.Served(ClusterResource.Group))
	}
	if l, err := v.List(context.Background(), MachineResource.GroupResource(), "default", metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Errorf("List = %v, %v", l, err)
	}
}
