// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
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
	var b strings.Builder
	c.writeTable(&b)
	for _, want := range []string{
		"Cluster API v1.8.1, balancer check tls, deregistration on-machine-delete: roll [old] -> [new] in 2m22s",
		"+33.4s  etcd member removed",
		"Old member in the balancer after its etcd member was removed: 1m40.6s",
		"What credwatch watch said (every 5s):",
		"-2.0s   member-joined   kube-apiserver-old",
		"+41.0s  member-unready  kube-apiserver-old  member-not-ready  member kube-apiserver-old is not ready",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
