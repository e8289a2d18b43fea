// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// BenchmarkPreflight500Machines parses and predicts a 500-machine control plane with a
// KubeadmConfig per machine and an issuer change: the target is well under 1 s per run.
func BenchmarkPreflight500Machines(b *testing.B) {
	doc := func(issuer string) []byte {
		var sb strings.Builder
		fmt.Fprintf(&sb, "apiVersion: controlplane.cluster.x-k8s.io/v1beta1\nkind: KubeadmControlPlane\nmetadata:\n  name: big-cp\nspec:\n  replicas: 500\n  version: v1.30.4\n  kubeadmConfigSpec:\n    clusterConfiguration:\n      apiServer:\n        extraArgs:\n          service-account-issuer: %s\n", issuer)
		for i := range 500 {
			fmt.Fprintf(&sb, "---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: Machine\nmetadata:\n  name: big-cp-%03d\n  labels:\n    cluster.x-k8s.io/control-plane: \"\"\nspec:\n  version: v1.30.4\n", i)
			fmt.Fprintf(&sb, "---\napiVersion: bootstrap.cluster.x-k8s.io/v1beta1\nkind: KubeadmConfig\nmetadata:\n  name: big-cp-%03d\nspec:\n  preKubeadmCommands: [\"true\"]\n", i)
		}
		return []byte(sb.String())
	}
	cur, pl := doc("https://old.example.com"), doc("https://new.example.com")
	b.ResetTimer()
	for b.Loop() {
		c, p := &input.Set{}, &input.Set{}
		if err := c.Add("current.yaml", cur); err != nil {
			b.Fatal(err)
		}
		if err := p.Add("planned.yaml", pl); err != nil {
			b.Fatal(err)
		}
		r, err := preflight.Run(preflight.Config{Current: c, Planned: p, CAPIVersion: "v1.9.0"})
		if err != nil || len(r.Steps) != 1000 {
			b.Fatalf("%v, %d steps", err, len(r.Steps))
		}
	}
}
