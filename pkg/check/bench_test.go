// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check_test

import (
	"context"
	"testing"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// BenchmarkCheckLab is a full check (members, trust matrix, inventory) of a 3-member lab.
// It starts its own lab, so it runs only with CREDWATCH_BENCH_LAB=1 and the lab lock held
// (hack/bench-check.sh does both).
func BenchmarkCheckLab(b *testing.B) {
	l, eps := labtest.StartBench(b, "hack/bench-check.sh", lab.Options{Members: 3})
	cfg := check.Config{REST: l.RESTConfig(), Endpoints: eps, CreateProbeSA: true}
	if _, err := check.Fetch(context.Background(), cfg); err != nil { // creates the probe account
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		snap, err := check.Fetch(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if r := check.Run(snap, check.Registry()); r.Partial || len(r.Findings) > 0 {
			b.Fatalf("partial=%v findings=%+v", r.Partial, r.Findings)
		}
	}
}
