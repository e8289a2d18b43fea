// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/lab/scenario"
)

// TestIntegrationCAPISelfManagedProviderPod runs capi-self-managed-roll with the lab provider
// moved as a Pod (CAPIOptions.ProviderInCluster, issue 40) on v1.14.2 behind TCP: after the move
// the cluster's own managers roll it, and the provider's Pod, through the lab's cloud API, makes
// the new machine's host, registers it with the balancer and deregisters and deletes the old
// one. 519 s on 2026-12-07; make test-capi-long runs it.
func TestIntegrationCAPISelfManagedProviderPod(t *testing.T) {
	labtest.CAPILong(t)
	o := scenario.CAPIOptions{Version: capi.V1142, HealthCheck: "tcp", ProviderInCluster: true}
	ev := runCAPIWithin(t, scenario.CAPISelfManagedRoll, o, 30*time.Minute)
	sm := ev.CAPI.SelfManaged
	if sm == nil || !strings.HasPrefix(sm.Move.Provider, "pod on ") {
		t.Fatalf("the provider did not move as a Pod: %+v", sm)
	}
	if !strings.HasPrefix(sm.Self.Outcome, "completed") {
		t.Errorf("the self-managed roll: %s", sm.Self.Outcome)
	}
	i := slices.IndexFunc(sm.Self.Managers, func(r capilab.ControllerReport) bool { return r.Name == "capl-controller-manager" })
	if i < 0 {
		t.Fatalf("no report of the provider's Pod among %d", len(sm.Self.Managers))
	}
	p := sm.Self.Managers[i]
	t.Logf("FIGURE provider Pod during the self-managed roll: %d Pods, %d restarts, %d leases lost, errors %+v, %s",
		p.Pods, p.Restarts, p.LostLease, p.Errors, p.Error)
	if p.Pods == 0 {
		t.Error("no log of the provider's Pod in the roll's window")
	}
	// The Pod's steps are in the scenario's timeline: the new machine made and registered, the
	// old one deregistered and deleted.
	r := ev.CAPI.Roll
	steps := func(machine string) []string {
		var out []string
		for _, line := range ev.CAPI.Timeline {
			if _, rest, ok := strings.Cut(line, " labmachine "); ok && (strings.Contains(rest, "/"+machine+" ") || strings.Contains(rest, "/"+machine+":")) {
				_, step, _ := strings.Cut(rest, ": ")
				step, _, _ = strings.Cut(step, " (")
				out = append(out, step)
			}
		}
		return out
	}
	for _, m := range r.After {
		if s := steps(m); !slices.Contains(s, string(infra.CreateHost)) || !slices.Contains(s, string(infra.Register)) {
			t.Errorf("new machine %s: steps %v, want create-host and register", m, s)
		}
	}
	for _, m := range r.Before {
		if s := steps(m); !slices.Contains(s, string(infra.Deregister)) || !slices.Contains(s, string(infra.DeleteHost)) {
			t.Errorf("old machine %s: steps %v, want deregister and delete-host", m, s)
		}
	}
	t.Logf("FIGURE in rotation after etcd removal: %s", ev.CAPI.Window)
}
