// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package controller

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/node"
)

func TestHostName(t *testing.T) {
	t.Parallel()
	long := "workload-cluster-with-a-long-name-control-plane-x7k2p" // 53 characters
	for _, tc := range []struct {
		name, in, want string
	}{
		{"KCP machine kept", "w1-control-plane-abcde", "w1-control-plane-abcde"},
		{"42 characters kept", strings.Repeat("a", 42), strings.Repeat("a", 42)},
		{"too long", long, "workload-cluster-with-a-long-name-" + hash(long)},
		{"43 characters", strings.Repeat("a", 43), strings.Repeat("a", 33) + "-" + hash(strings.Repeat("a", 43))},
		{"dots and capitals", "W1.cp.0", "w1-cp-0-" + hash("W1.cp.0")},
		{"dash before the hash trimmed", strings.Repeat("a", 32) + "-bcdefghijk", strings.Repeat("a", 32) + "-" + hash(strings.Repeat("a", 32)+"-bcdefghijk")},
		{"nothing usable", "...", "m-" + hash("...")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := HostName(tc.in)
			if got != tc.want {
				t.Errorf("HostName(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if !node.ValidName(got) {
				t.Errorf("HostName(%q) = %q is not a valid node name", tc.in, got)
			}
			if HostName(tc.in) != got {
				t.Errorf("HostName(%q) is not deterministic", tc.in)
			}
		})
	}
}

// hash is the 8 hex digits HostName appends: FNV-1a, 32 bits, written out.
func hash(s string) string {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return fmt.Sprintf("%08x", h)
}

func obj(kind, name string, labels map[string]string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"kind": kind}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetName(name)
	u.SetNamespace("default")
	u.SetLabels(labels)
	return u
}

func deleted(u *unstructured.Unstructured) *unstructured.Unstructured {
	now := metav1.Now()
	u.SetDeletionTimestamp(&now)
	return u
}

func TestMachineState(t *testing.T) {
	t.Parallel()
	cp := map[string]string{ControlPlaneLabel: "", ClusterNameLabel: "w1"}
	machine := func(labels map[string]string, secret string) *unstructured.Unstructured {
		spec := map[string]any{"clusterName": "w1"}
		if secret != "" {
			spec["bootstrap"] = map[string]any{"dataSecretName": secret}
		}
		return obj("Machine", "m", labels, map[string]any{"spec": spec})
	}
	cluster := func(ready bool) *unstructured.Unstructured {
		return obj("Cluster", "w1", nil, map[string]any{"status": map[string]any{"infrastructureReady": ready}})
	}
	labMachine := func(providerID string) *unstructured.Unstructured {
		return obj("LabMachine", "m", nil, map[string]any{"spec": map[string]any{"providerID": providerID}})
	}
	for _, tc := range []struct {
		name                 string
		lm, machine, cluster *unstructured.Unstructured
		facts                hostFacts
		want                 infra.MachineState
	}{
		{"nothing found", labMachine(""), nil, nil, hostFacts{}, infra.MachineState{}},
		{"worker, cluster not ready", labMachine(""), machine(nil, ""), cluster(false), hostFacts{}, infra.MachineState{}},
		{"control plane with bootstrap data", labMachine(""), machine(cp, "m-bootstrap"), cluster(true), hostFacts{},
			infra.MachineState{ControlPlane: true, ClusterReady: true, Bootstrap: true}},
		{"host facts copied", labMachine(""), machine(cp, "s"), cluster(true), hostFacts{Up: true, Bootstrapped: true, InLB: true},
			infra.MachineState{ControlPlane: true, ClusterReady: true, Bootstrap: true, HostUp: true, Bootstrapped: true, InLB: true}},
		{"providerID alone is no host while alive", labMachine("lab://m"), machine(nil, "s"), cluster(true), hostFacts{},
			infra.MachineState{ClusterReady: true, Bootstrap: true}},
		{"machine draining", labMachine("lab://m"), deleted(machine(cp, "s")), cluster(true), hostFacts{Up: true, InLB: true},
			infra.MachineState{ControlPlane: true, ClusterReady: true, Bootstrap: true, HostUp: true, InLB: true, MachineDeleting: true}},
		{"deleted with a providerID: its host goes", deleted(labMachine("lab://m")), nil, nil, hostFacts{},
			infra.MachineState{Deleting: true, HostUp: true}},
		{"deleted without a host", deleted(labMachine("")), nil, nil, hostFacts{}, infra.MachineState{Deleting: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := machineState(tc.lm, tc.machine, tc.cluster, tc.facts); got != tc.want {
				t.Errorf("machineState = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestOwnerAndCluster(t *testing.T) {
	t.Parallel()
	owned := func(refs ...metav1.OwnerReference) *unstructured.Unstructured {
		u := obj("LabMachine", "lm", map[string]string{ClusterNameLabel: "from-label"}, nil)
		u.SetOwnerReferences(refs)
		return u
	}
	ms := metav1.OwnerReference{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "MachineSet", Name: "set"}
	m := metav1.OwnerReference{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "Machine", Name: "m1"}
	other := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Machine", Name: "not-capi"}
	for _, tc := range []struct {
		name    string
		lm      *unstructured.Unstructured
		machine *unstructured.Unstructured
		owner   string
		cluster string
	}{
		{"no owner", owned(), nil, "", "from-label"},
		{"Machine among others", owned(ms, other, m), nil, "m1", "from-label"},
		{"another group's Machine", owned(other), nil, "", "from-label"},
		{"spec.clusterName first", owned(m), obj("Machine", "m1", map[string]string{ClusterNameLabel: "l"},
			map[string]any{"spec": map[string]any{"clusterName": "spec"}}), "m1", "spec"},
		{"then the Machine's label", owned(m), obj("Machine", "m1", map[string]string{ClusterNameLabel: "l"}, nil), "m1", "l"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ownerMachine(tc.lm); got != tc.owner {
				t.Errorf("ownerMachine = %q, want %q", got, tc.owner)
			}
			if got := clusterName(tc.machine, tc.lm); got != tc.cluster {
				t.Errorf("clusterName = %q, want %q", got, tc.cluster)
			}
		})
	}
}

func TestBootstrapData(t *testing.T) {
	t.Parallel()
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	doc := "#cloud-config\nruncmd: [true]\n"
	for _, tc := range []struct {
		name    string
		data    map[string]any
		want    string
		wantErr string
	}{
		{"cloud-config", map[string]any{"value": b64(doc), "format": b64("cloud-config")}, doc, ""},
		{"no format", map[string]any{"value": b64(doc)}, doc, ""},
		{"ignition", map[string]any{"value": b64("{}"), "format": b64("ignition")}, "", `format "ignition": the lab runs only cloud-config`},
		{"no value", map[string]any{"format": b64("cloud-config")}, "", "no value"},
		{"empty value", map[string]any{"value": ""}, "", "no value"},
		{"not base64", map[string]any{"value": "!!"}, "", "key value is not base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := bootstrapData(obj("Secret", "m-bootstrap", nil, map[string]any{"data": tc.data}))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "m-bootstrap") {
					t.Fatalf("error %v, want one naming the secret and %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), doc) {
					t.Errorf("error quotes the document: %v", err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("bootstrapData = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestFinalizer(t *testing.T) {
	t.Parallel()
	u := obj("LabMachine", "m", nil, nil)
	u.SetFinalizers([]string{"other"})
	if !setFinalizer(u, MachineFinalizer, true) || setFinalizer(u, MachineFinalizer, true) {
		t.Fatal("adding the finalizer twice changed u twice, or never")
	}
	if !hasMachineFinalizer(u) {
		t.Fatal("finalizer not found after adding it")
	}
	if !setFinalizer(u, MachineFinalizer, false) || setFinalizer(u, MachineFinalizer, false) {
		t.Fatal("removing the finalizer twice changed u twice, or never")
	}
	if got := u.GetFinalizers(); len(got) != 1 || got[0] != "other" {
		t.Errorf("finalizers %v, want [other]", got)
	}
}
