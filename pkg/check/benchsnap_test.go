// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"testing"
	"time"
)

// benchmarkSnapshot builds a synthetic snapshot (members all agreeing, pods with projected
// tokens, legacy token secrets) for benchmarks of the pure checks.
func benchmarkSnapshot(members, pods, secrets int) *Snapshot {
	s := &Snapshot{Now: time.Now(), Server: "https://lb:6443", Sources: map[string]string{}, Matrix: &Matrix{}}
	for i := range members {
		name := fmt.Sprintf("apiserver-%d", i)
		s.Members = append(s.Members, Member{Endpoint: Endpoint{Name: name, URL: "https://" + name + ":6443"}, Reachable: true, SigningIss: "https://kubernetes.default.svc.cluster.local", SigningKID: "kid", JWKS: []JWK{{KID: "kid"}}, APIAudiences: []string{"https://kubernetes.default.svc.cluster.local"}})
		s.Matrix.Members = append(s.Matrix.Members, name)
	}
	for _, via := range s.Matrix.Members {
		row := Row{Token: "minted through " + via, Via: via, KID: "kid"}
		for _, m := range s.Matrix.Members {
			row.Cells = append(row.Cells, Cell{Member: m, Accepted: true})
		}
		s.Matrix.Rows = append(s.Matrix.Rows, row)
	}
	for i := range pods {
		p := Pod{Namespace: fmt.Sprintf("ns-%d", i%20), Name: fmt.Sprintf("pod-%d", i), Phase: "Pending",
			Projected: []ProjectedToken{{ExpirationSeconds: 3607}}}
		if i%20 == 0 {
			p.SecretVolumes = []string{fmt.Sprintf("legacy-token-%d", i)}
		}
		s.Pods = append(s.Pods, p)
	}
	for i := range secrets {
		s.LegacySecrets = append(s.LegacySecrets, LegacySecret{Namespace: fmt.Sprintf("ns-%d", i%20), Name: fmt.Sprintf("legacy-token-%d", i)})
	}
	return s
}

// BenchmarkRun is the pure logic over a 5-member snapshot with a populated inventory.
func BenchmarkRun(b *testing.B) {
	snap := benchmarkSnapshot(5, 10000, 5000)
	b.ReportAllocs()
	for b.Loop() {
		Run(snap, Registry())
	}
}
