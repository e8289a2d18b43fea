// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario_test

import (
	"context"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/kubeadm"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/lab/scenario"
)

// TestIntegrationCAPIScenario runs capi-roll through the registry as `lab scenario capi-roll
// --capi v1.8.4 --lb-check https-readyz` does: the release whose KubeadmControlPlane removes the
// old etcd member after the drain, behind a balancer that checks /readyz. It needs make
// capi-binaries (make test-capi runs it).
func TestIntegrationCAPIScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: skipped under -short")
	}
	bin := lab.DefaultBinDir()
	if _, err := capi.Find(bin, capi.V184); err != nil {
		t.Skipf("%v", err)
	}
	if _, err := kubeadm.FindBinaries(bin); err != nil {
		t.Skipf("%v", err)
	}
	s, _ := scenario.Get("capi-roll")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	ev, err := scenario.Run(ctx, s, scenario.RunOptions{Dir: t.TempDir(), Log: labtest.Log(t),
		CAPI: scenario.CAPIOptions{Version: capi.V184, HealthCheck: "https-readyz"}})
	if err != nil {
		t.Fatal(err)
	}
	if ev.CAPI == nil || len(ev.CAPI.Roll.After) != 1 || ev.CAPI.Roll.Before[0] == ev.CAPI.Roll.After[0] {
		t.Fatalf("evidence: %+v", ev.CAPI)
	}
	t.Logf("FIGURE capi-roll v1.8.4 https-readyz: roll %s, in rotation after etcd removal %s, failed drains %d; notes %q",
		ev.CAPI.Roll.Duration, ev.CAPI.Window, ev.CAPI.Roll.DrainErrors, ev.Notes)
}
