// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario_test

import (
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab/scenario"
)

// What NodeRestriction answers a kubelet that requests a token for an audience no volume of the
// pod names (plugin/pkg/admission/noderestriction/admission.go at v1.36.3).
const msgNodeAudience = "not found in pod spec volume, system:node:"

func TestIntegrationScenarioNodeAudience(t *testing.T) {
	runOn(t, scenario.CredentialProviderLab{}.LabOptions(2), onlySteps(t, nodeTests), map[string]check{
		"node-audience-denied": nodeAudienceDeniedCheck,
	})
}

func nodeAudienceDeniedCheck(t *testing.T, ev *scenario.Evidence) {
	noKeyMaterial(t, ev)
	p := phase(t, ev, "a pod whose spec names no volume")
	probesAsExpected(t, p)
	if !strings.Contains(p.Measured["kubelet"], msgNodeAudience) {
		t.Errorf("the kubelet logged %q, want the refusal %q", p.Measured["kubelet"], msgNodeAudience)
	}
	if got := p.Measured["credwatch logs cause"]; got != "node-audience-not-allowed" {
		t.Errorf("credwatch logs names %q for the kubelet's line, want node-audience-not-allowed", got)
	}
	if p.Measured["provider requests"] != "0" {
		t.Errorf("the provider got %s requests for the refused pod, want 0", p.Measured["provider requests"])
	}
	p = phase(t, ev, "a pod with a projected token volume")
	probesAsExpected(t, p)
	if !strings.Contains(p.Measured["provider request"], `"token":true`) || !strings.Contains(p.Measured["provider request"], "registry.credwatch.lab") {
		t.Errorf("the provider's request %q: want a token for registry.credwatch.lab", p.Measured["provider request"])
	}
}
