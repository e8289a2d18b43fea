// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/capilab"
)

func TestCAPIEvidenceTable(t *testing.T) {
	start := time.Date(2026, 12, 4, 4, 0, 0, 0, time.UTC)
	c := &CAPIEvidence{CAPI: "v1.8.1", HealthCheck: "tls", Deregistration: "on-machine-delete", Window: "1m40.6s",
		Roll: capilab.Roll{Started: start, Before: []string{"old"}, After: []string{"new"}, Duration: "2m22s",
			Phases: []capilab.Phase{{At: start.Add(33400 * time.Millisecond), What: capilab.PhaseMemberRemoved, Machine: "old"}}},
		Watch: []WatchEvent{{At: start.Add(-2 * time.Second), Kind: "member-joined", Member: "kube-apiserver-old", Message: "member kube-apiserver-old joined"},
			{At: start.Add(41 * time.Second), Kind: "member-unready", Member: "kube-apiserver-old", ID: "member-not-ready", Message: "member kube-apiserver-old is not ready"}}}
	fromRemoval(c.Watch, c.Roll.At(capilab.PhaseMemberRemoved, "old"))
	var b strings.Builder
	c.writeTable(&b)
	for _, want := range []string{
		"Cluster API v1.8.1, balancer check tls, deregistration on-machine-delete: roll [old] -> [new] in 2m22s",
		"+33.4s  etcd member removed",
		"Old member in the balancer after its etcd member was removed: 1m40.6s",
		"What credwatch watch from outside said (every 5s):",
		"-2.0s   -35.4s        member-joined   kube-apiserver-old",
		"+41.0s  +7.6s         member-unready  kube-apiserver-old  member-not-ready  member kube-apiserver-old is not ready",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestObserved: what a roll's phases show of the predictable findings, and when a prediction
// agrees with them.
func TestObserved(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	roll := func(removed, deleting, out float64) capilab.Roll {
		return capilab.Roll{Before: []string{"old"}, After: []string{"new"}, Phases: []capilab.Phase{
			{At: at(removed), What: capilab.PhaseMemberRemoved, Machine: "old"},
			{At: at(deleting), What: capilab.PhaseDeleting, Machine: "old"},
			{At: at(out), What: capilab.PhaseOutOfRotation, Machine: "old"},
		}}
	}
	tests := []struct {
		name string
		ce   CAPIEvidence
		want []string
	}{
		// v1.8.1 behind TLS: removed with the deletion (seen in the same look, timed after it),
		// out of rotation 100 s later.
		{"v1.8.1 tls", CAPIEvidence{Roll: roll(40.35, 40.3, 140.7)}, []string{"etcd-removed-before-drain", "lb-check-not-ready-aware", "rollout-planned"}},
		// v1.8.4 behind /readyz: removed after the drain, out 24 s later (3 checks).
		{"v1.8.4 https-readyz", CAPIEvidence{Roll: roll(55.6, 54.5, 80)}, []string{"rollout-planned"}},
		{"sa key regenerated", CAPIEvidence{Roll: roll(55.6, 54.5, 80), SAKeyBefore: "a", SAKeyAfter: "b"}, []string{"rollout-planned", "sa-key-change", "sa-secret-missing"}},
		// v1.14.2 with <cluster>-sa deleted: no new machine, CertificatesAvailable False.
		{"sa secret missing, roll blocked", CAPIEvidence{SAKeyBefore: "a", Roll: capilab.Roll{Before: []string{"old"}, Blocked: &capilab.Blocked{
			Condition: capilab.Condition{Type: "CertificatesAvailable", Status: "False", Reason: "CertificatesNotAvailable"}, Replicas: 1, UpToDate: 0}}},
			[]string{"rollout-planned", "sa-secret-missing"}},
		{"placeholder rewritten", CAPIEvidence{Roll: roll(55.6, 54.5, 80), Patched: "sed", APIServerRuns: map[string][]capilab.Run{"new": {{}, {}}}},
			[]string{"issuer-placeholder", "rollout-planned"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.ce.observed()
			if !slices.Equal(got, tt.want) {
				t.Errorf("observed = %v, want %v", got, tt.want)
			}
			p := Prediction{Predicted: append([]string{"no-change"}, tt.want...), Observed: got, Observable: capiObservable}
			if !p.Agrees() {
				t.Errorf("a prediction of %v does not agree with %v", p.Predicted, got)
			}
			p.Predicted = []string{"rollout-planned", "lb-check-not-ready-aware", "etcd-removed-before-drain", "sa-key-change"}
			if p.Agrees() && !slices.Equal(got, p.observable()) {
				t.Errorf("%v agrees with %v", p.Predicted, got)
			}
		})
	}
}
