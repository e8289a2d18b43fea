// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/liveness"
)

// TestIntegrationInventoryRead: on each lab line, the inventory read from the watch cache
// (check.ReadCache) gives the same findings, inventory and liveness as the paged consistent read
// (check.ReadPaged) on the same populated lab, and reads each list the way docs/check.md says.
func TestIntegrationInventoryRead(t *testing.T) {
	for _, version := range []string{lab.DefaultVersion, lab.OldVersion} {
		t.Run(version, func(t *testing.T) {
			l := labtest.Start(t, lab.Options{Members: 1, Version: version})
			cs, err := kubernetes.NewForConfig(l.RESTConfig())
			if err != nil {
				t.Fatal(err)
			}
			populateSmall(t, cs)
			var eps []string
			for _, m := range l.Members() {
				eps = append(eps, m.URL)
			}
			cfg := check.Config{REST: l.RESTConfig(), Endpoints: eps, CreateProbeSA: true, Timeout: 10 * time.Second,
				Cloud: check.CloudConfig{Skip: true}}
			read := func(how check.InventoryRead) (*check.Snapshot, *check.Report) {
				c := cfg
				c.Inventory = how
				snap, err := check.Fetch(context.Background(), c)
				if err != nil {
					t.Fatalf("fetch (%q): %v", how, err)
				}
				return snap, check.Run(snap, check.Registry())
			}
			read(check.ReadCache) // creates the probe service account, which the counts include
			pagedSnap, paged := read(check.ReadPaged)
			cacheSnap, cache := read(check.ReadCache)

			wantReads := map[string]string{check.SrcPods: check.HowCache, check.SrcSecrets: check.HowCache,
				check.SrcNodes: check.HowLargePages, check.SrcServiceAccounts: check.HowCount}
			if !maps.Equal(cacheSnap.Reads, wantReads) {
				t.Errorf("cache read: %v, want %v", cacheSnap.Reads, wantReads)
			}
			for src, how := range pagedSnap.Reads {
				if how != check.HowPaged {
					t.Errorf("paged read: %s read %q", src, how)
				}
			}
			delete(cacheSnap.Sources, check.SrcCloud) // --no-cloud
			delete(pagedSnap.Sources, check.SrcCloud)
			if len(cacheSnap.Sources) > 0 || len(pagedSnap.Sources) > 0 {
				t.Errorf("unavailable: cache read %v, paged read %v", cacheSnap.Sources, pagedSnap.Sources)
			}
			if !maps.Equal(cache.Inventory.Reads, cacheSnap.Reads) {
				t.Errorf("the report's reads %v, the snapshot's %v", cache.Inventory.Reads, cacheSnap.Reads)
			}
			cache.Inventory.Reads, paged.Inventory.Reads = nil, nil // how, not what: compared above
			sameJSON(t, "inventory", cache.Inventory, paged.Inventory)
			sameJSON(t, "nodes", cache.Liveness.UninitializedNodes, paged.Liveness.UninitializedNodes)
			sameJSON(t, "pods", sortedBy(cacheSnap.Pods, podKey), sortedBy(pagedSnap.Pods, podKey))
			sameJSON(t, "legacy secrets", sortedBy(cacheSnap.LegacySecrets, secretKey), sortedBy(pagedSnap.LegacySecrets, secretKey))
			sameJSON(t, "findings", findingKeys(cache), findingKeys(paged))
			if cache.Inventory.Pods != smallPods || cache.Inventory.LegacySecrets != smallSecrets || cache.Liveness.Nodes != smallNodes {
				t.Errorf("inventory %+v, %d nodes; want %d pods, %d legacy secrets, %d nodes",
					cache.Inventory, cache.Liveness.Nodes, smallPods, smallSecrets, smallNodes)
			}
			if len(findingKeys(cache)) == 0 {
				t.Error("no findings: the lab should raise legacy-tokens-in-use and nodes-uninitialized")
			}
		})
	}
}

const (
	smallNamespaces = 3
	smallPods       = 120
	smallSecrets    = 30
	smallNodes      = 4
)

// populateSmall makes a small inventory that raises inventory findings: legacy token Secrets
// marked used and invalid and mounted by pods, pods with projected tokens, nodes one of which the
// cloud provider has not initialized, and a pod Pending because of it.
func populateSmall(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ns := func(i int) string { return fmt.Sprintf("inv-%d", i%smallNamespaces) }
	for i := range smallNamespaces {
		must(cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns(i)}}, metav1.CreateOptions{}))
		// the lab runs no controller manager to make it
		must(cs.CoreV1().ServiceAccounts(ns(i)).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}))
	}
	for i := range smallNodes {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("inv-node-%d", i)}}
		if i == 0 {
			n.Spec.Taints = []corev1.Taint{{Key: liveness.TaintUninitialized, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
		}
		must(cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}))
	}
	for i := range smallSecrets {
		labels := map[string]string{}
		if i%3 == 0 {
			labels["kubernetes.io/legacy-token-last-used"] = "2026-11-01"
		}
		if i%5 == 0 {
			labels["kubernetes.io/legacy-token-invalid-since"] = "2026-11-20"
		}
		must(cs.CoreV1().Secrets(ns(i)).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("tok-%d", i),
			Labels: labels, Annotations: map[string]string{corev1.ServiceAccountNameKey: "default"}},
			Type: corev1.SecretTypeServiceAccountToken}, metav1.CreateOptions{}))
	}
	exp := int64(7200)
	for i := range smallPods {
		spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
			NodeName: fmt.Sprintf("inv-node-%d", 1+i%(smallNodes-1))}
		if i%4 == 0 {
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "legacy", VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: fmt.Sprintf("tok-%d", i%smallSecrets)}}})
		}
		if i%7 == 0 {
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "vault", VolumeSource: corev1.VolumeSource{
				Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
					Audience: "vault", ExpirationSeconds: &exp, Path: "token"}}}}}})
		}
		if i == 0 { // Pending: the only node it would fit is not initialized
			spec.NodeName = ""
		}
		p, err := cs.CoreV1().Pods(ns(i)).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i)}, Spec: spec}, metav1.CreateOptions{})
		must(p, err)
		if i == 0 {
			p.Status.Phase = corev1.PodPending
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
				Message: "0/4 nodes are available: 1 node(s) had untolerated taint {node.cloudprovider.kubernetes.io/uninitialized: true}."}}
			must(cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}))
		}
	}
}

func podKey(p check.Pod) string             { return p.Namespace + "/" + p.Name }
func secretKey(s check.LegacySecret) string { return s.Namespace + "/" + s.Name }

func sortedBy[T any](s []T, key func(T) string) []T {
	s = slices.Clone(s)
	slices.SortFunc(s, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return s
}

// findingKeys are the findings without their wording, which may name ages.
func findingKeys(r *check.Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, fmt.Sprintf("%s %s member=%s object=%s", f.ID, f.Severity, f.Member, f.Object))
	}
	slices.Sort(out)
	return out
}

func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s: the cache read gives\n%s\nthe paged read\n%s", what, g, w)
	}
}
