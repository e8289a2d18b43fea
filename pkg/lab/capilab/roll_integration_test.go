// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab_test

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/workload"
	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

var update = flag.Bool("update", false, "rewrite docs/lab-capi-rolls.md from the rolls measured")

// evidenceFile is the table the roll test writes with -update for the one-machine rolls, and
// evidenceFileThree the one for the three-machine roll (make test-capi-long).
const (
	evidenceFile      = "../../../docs/lab-capi-rolls.md"
	evidenceFileThree = "../../../docs/lab-capi-rolls-3.md"
)

// TestIntegrationCAPIRoll rolls the control plane with the real KubeadmControlPlane
// (spec.rolloutAfter, maxSurge 1): 1 → 2 → 1 at v1.8.1, v1.8.4 and v1.14.2, and 3 → 4 → 3 at
// v1.14.2 — a machine joins with kubeadm join, then an old one's etcd member is removed and the
// machine deleted, once per old machine. v1.8.1 removes the member before the drain, v1.8.4 and
// v1.14.2 in the pre-terminate hook after it. The LabCluster's balancer deregisters a machine when
// its LabMachine is deleted (CAPA before v2.4); with a TLS-only check the member whose etcd member
// is gone stays in rotation: the test measures that window, per old machine, and the drains that
// failed through it. With -update it writes the table of docs/lab-capi-rolls.md.
func TestIntegrationCAPIRoll(t *testing.T) {
	type row struct {
		version  string
		check    lb.HealthCheck
		replicas int
		r        capilab.Roll
		old      string
		window   time.Duration // registered after the etcd removal
		traffic  time.Duration // in rotation after the etcd removal
	}
	var rows []row
	for _, tc := range []struct {
		version  string
		check    lb.HealthCheck
		replicas int
	}{
		{capi.V181, lb.CheckTLS, 1},
		{capi.V184, lb.CheckHTTPSReadyz, 1},
		// CAPA's default check (TCP) on v1.14.2: the etcd member leaves in the pre-terminate
		// hook, after moving leadership away, just before the machine is deleted.
		{capi.V1142, lb.CheckTCP, 1},
		// Three machines, as production control planes run: each old machine in turn, the etcd
		// leader moved away from each before its member goes. Too long for make test-capi's
		// budget on 2 cores: make test-capi-long.
		{capi.V1142, lb.CheckTCP, 3},
	} {
		t.Run(fmt.Sprintf("%s/%s/%d", tc.version, tc.check, tc.replicas), func(t *testing.T) {
			if tc.replicas > 1 {
				labtest.CAPILong(t)
			}
			c, ctx, _ := startCAPILabWith(t, tc.version, workload.Config{Name: "w1", Replicas: tc.replicas,
				LoadBalancer: infra.LoadBalancer{HealthCheck: tc.check, Deregistration: infra.OnMachineDelete}})
			if _, err := c.WaitControlPlane(ctx, tc.replicas); err != nil {
				t.Fatal(err)
			}
			r, err := c.Roll(ctx, capilab.RollOptions{})
			for _, p := range r.Phases {
				t.Logf("roll: +%6.1fs %-22s %s", p.At.Sub(r.Started).Seconds(), p.What, p.Machine)
			}
			for _, e := range c.Events() {
				t.Logf("timeline: %s", e)
			}
			if err != nil {
				t.Fatal(err)
			}
			n := tc.replicas
			t.Logf("FIGURE capi %s roll %d -> %d -> %d in %s: %v -> %v; %d failed drains (last: %s); open to the old machines out of rotation: %v",
				tc.version, n, n+1, n, r.Duration, r.Before, r.After, r.DrainErrors, r.DrainError, r.OpenWhileOut)
			if len(r.Before) != n || len(r.After) != n {
				t.Fatalf("roll replaced %v with %v, want %d machines by %d others", r.Before, r.After, n, n)
			}
			for _, old := range r.Before {
				if slices.Contains(r.After, old) {
					t.Fatalf("%s is still there after the roll: %v", old, r.After)
				}
				removed := r.At(capilab.PhaseMemberRemoved, old)
				var dereg time.Time
				for _, e := range c.Events() {
					if e.Machine == old && e.Step == infra.Deregister {
						dereg = e.Time
					}
				}
				if removed.IsZero() || dereg.IsZero() {
					t.Fatalf("etcd member of %s removed at %v, deregistered at %v: want both", old, removed, dereg)
				}
				window := dereg.Sub(removed).Round(100 * time.Millisecond)
				traffic := r.At(capilab.PhaseOutOfRotation, old).Sub(removed).Round(100 * time.Millisecond)
				t.Logf("FIGURE capi %s %s on-machine-delete: %s registered %s and in rotation %s after its etcd member was removed", tc.version, tc.check, old, window, traffic)
				rows = append(rows, row{tc.version, tc.check, n, r, old, window, traffic})
			}
		})
	}
	if !*update {
		return
	}
	for _, f := range []struct {
		path  string
		three bool
	}{{evidenceFile, false}, {evidenceFileThree, true}} {
		var b strings.Builder
		n := 0
		for _, rw := range rows {
			if (rw.replicas > 1) != f.three {
				continue
			}
			n++
			at := func(what string) string {
				return fmt.Sprintf("+%.1f s", rw.r.At(what, rw.old).Sub(rw.r.Started).Seconds())
			}
			last := rw.r.DrainError
			if last == "" {
				last = "—"
			}
			open := "—"
			if c, ok := rw.r.OpenWhileOut[rw.old]; ok {
				open = fmt.Sprintf("%d at most", c)
			}
			roll := rw.r.Duration
			if f.three {
				roll = fmt.Sprintf("3 → 4 → 3 in %s | %s (%d of 3)", rw.r.Duration, rw.old, slices.Index(rw.r.Before, rw.old)+1)
			}
			fmt.Fprintf(&b, "| %s | %s | on-machine-delete | %s | %s | %s | %s | %s | %s | %s | %s | %d | `%s` |\n", rw.version, rw.check, roll,
				at(capilab.PhaseDeleting), at(capilab.PhaseMemberRemoved), at(capilab.PhaseOutOfRotation), at(capilab.PhaseMachineDeleted),
				rw.window, rw.traffic, open, rw.r.DrainErrors, strings.ReplaceAll(last, "|", `\|`))
		}
		if n == 0 {
			continue // that roll did not run: its table stays
		}
		head := "<!-- Generated by `go test ./pkg/lab/capilab -run TestIntegrationCAPIRoll -args -update` (make capi-binaries first). -->\n" +
			"| Cluster API | LB check | deregistration | roll | old machine deleting | its etcd member removed | out of rotation | machine deleted | registered after etcd removal | in rotation after etcd removal | connections still open to it out of rotation | failed drains | last drain error |\n" +
			"|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
		if f.three {
			head = "<!-- Generated by `CREDWATCH_CAPI_TESTS=long go test ./pkg/lab/capilab -run 'TestIntegrationCAPIRoll$/v1.14.2/tcp/3' -args -update` (make test-capi-long runs it without -update). -->\n" +
				"| Cluster API | LB check | deregistration | roll | old machine | old machine deleting | its etcd member removed | out of rotation | machine deleted | registered after etcd removal | in rotation after etcd removal | connections still open to it out of rotation | failed drains (whole roll) | last drain error |\n" +
				"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
		}
		if err := os.WriteFile(f.path, []byte(head+b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
