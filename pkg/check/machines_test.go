// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/report"
)

func TestRelateMachines(t *testing.T) {
	members := []Member{
		{Endpoint: Endpoint{Name: "kube-apiserver-w1-cp-a", URL: "https://10.200.1.100:6443", StaticPod: "kube-system/kube-apiserver-w1-cp-a"}},
		{Endpoint: Endpoint{Name: "w1-cp-b", URL: "https://10.200.1.101:6443"}},           // named by its serving certificate
		{Endpoint: Endpoint{Name: "10.200.1.102:6443", URL: "https://10.200.1.102:6443"}}, // only its address
		{Endpoint: Endpoint{Name: "stray", URL: "https://10.200.1.150:6443"}},
	}
	ca := &ClusterAPI{Cluster: "default/w1", Version: "v1.8.1", Machines: []Machine{
		{Name: "w1-cp-a", NodeName: "w1-cp-a", Phase: "Running"},
		{Name: "w1-cp-b", NodeName: "w1-cp-b", Phase: "Deleting", Deleting: true},
		{Name: "w1-cp-c", Addresses: []string{"w1-cp-c", "10.200.1.102"}, Phase: "Provisioned"},
		{Name: "w1-cp-d", Phase: "Provisioning"},
	}}
	given := ca.clone()
	related := ca.clone()
	relateMachines(members, related)
	wantMember := map[string]string{"w1-cp-a": "kube-apiserver-w1-cp-a", "w1-cp-b": "w1-cp-b", "w1-cp-c": "10.200.1.102:6443", "w1-cp-d": ""}
	for _, m := range related.Machines {
		if m.Member != wantMember[m.Name] {
			t.Errorf("machine %s: member %q, want %q", m.Name, m.Member, wantMember[m.Name])
		}
	}
	wantMachine := []string{"w1-cp-a", "w1-cp-b", "w1-cp-c", ""}
	for i, m := range members {
		if m.Machine != wantMachine[i] {
			t.Errorf("member %s: machine %q, want %q", m.Name, m.Machine, wantMachine[i])
		}
	}
	if ca.Machines[0].Member != "" || given.Machines[0].Member != "" {
		t.Error("relating changed the caller's ClusterAPI")
	}

	s := &Snapshot{Server: "https://10.200.1.1:6443", Now: time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC), Members: members, ClusterAPI: related}
	r := Run(s, nil)
	var b bytes.Buffer
	if err := r.WriteTable(&b, report.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"CLUSTER API MACHINES (cluster default/w1, Cluster API v1.8.1)", "w1-cp-b  Deleting", "w1-cp-d  Provisioning  -"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestCAPIRollBlocked: a KubeadmControlPlane whose CertificatesAvailable is False (Cluster API
// v1.13+ with <cluster>-sa deleted) is named with its message and the Machine that waits; the
// table says so under CLUSTER API MACHINES; a clean control plane, or none read, says nothing.
func TestCAPIRollBlocked(t *testing.T) {
	no := false
	blocked := &ClusterAPI{Cluster: "default/w1", Version: "v1.14.2",
		Machines: []Machine{{Name: "w1-control-plane-abc12", Phase: "Running", UpToDate: &no}},
		ControlPlane: &ControlPlaneStatus{Name: "default/w1-control-plane", Replicas: 1, UpToDate: 0, Conditions: []Condition{
			{Type: "Available", Status: "True", Reason: "Available"},
			{Type: "CertificatesAvailable", Status: "False", Reason: "NotAvailable", Message: "Cluster certificate for sa is not available, please check cluster certificate secrets"},
		}}}
	fs := checkCAPIRoll(&Snapshot{ClusterAPI: blocked})
	if len(fs) != 1 || fs[0].ID != "capi-roll-blocked" {
		t.Fatalf("findings %+v, want one capi-roll-blocked", fs)
	}
	for _, want := range []string{"default/w1-control-plane", "CertificatesAvailable is False (NotAvailable)", "Cluster certificate for sa is not available", "0 of 1 machines up to date", "waiting to be replaced: w1-control-plane-abc12"} {
		if !strings.Contains(fs[0].Message, want) {
			t.Errorf("message %q lacks %q", fs[0].Message, want)
		}
	}
	var b bytes.Buffer
	if err := writeMachines(&b, report.TableOptions{}, blocked.clone()); err != nil {
		t.Fatal(err)
	}
	if want := "KubeadmControlPlane default/w1-control-plane: 0 of 1 machines up to date; roll blocked: CertificatesAvailable=False"; !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
	clean := blocked.clone()
	clean.ControlPlane.Conditions[1].Status = "True"
	for _, ca := range []*ClusterAPI{nil, {Cluster: "default/w1"}, clean} {
		if fs := checkCAPIRoll(&Snapshot{ClusterAPI: ca}); len(fs) != 0 {
			t.Errorf("%+v: findings %+v, want none", ca, fs)
		}
	}
}
