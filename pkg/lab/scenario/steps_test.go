// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab/scenario"
)

// The scenarios each lab test runs, in order on one lab, and those hack/capture-logs.sh captures
// for the logs package's tests. TestEveryScenarioIsRun keeps both complete.
var (
	newLineSteps    = []string{"bound-object-deleted", "serviceaccount-recreated", "clock-skew", "key-drift", "issuer-change", "audience-change", "healthy-roll", "etcd-member-removed"}
	oldLineSteps    = []string{"key-drift", "clock-skew", "serviceaccount-recreated", "mixed-version-roll"}
	newLineCaptures = newLineSteps
	oldLineCaptures = []string{"bound-object-deleted", "serviceaccount-recreated", "clock-skew", "key-drift", "issuer-change", "audience-change", "healthy-roll", "etcd-member-removed", "mixed-version-roll"}
	// The cloud scenarios run in pkg/lab/cloudlab's integration tests (their own labs, with
	// nodes and a vCenter simulator; TestIntegrationScenarioCommand runs one through
	// credwatch-cloudlab); their evidence is committed in docs/evidence, not captured for logs.
	cloudTests = []string{"cloud-password-rotated", "cloud-password-rotated-external", "cloud-password-rotated-openstack"}
	// The Cluster API scenarios run in TestIntegrationCAPIScenario (make test-capi; they need
	// make capi-binaries); their evidence is in docs/lab-capi.md, not captured for logs.
	capiTests = []string{"capi-roll", "capi-sa-secret-deleted", "capi-issuer-placeholder", "capi-self-managed-roll"}
	// The external-signer scenarios run in TestIntegrationScenarioSigners on a SignerLab.
	signerTests = []string{"signer-key-divergence", "signer-stale", "signer-down-at-restart"}
	authnTests  = []string{"authn-config-drift", "jwt-issuer-jwks-unreachable"}
	nodeTests   = []string{"node-audience-denied"}
)

// TestEveryScenarioIsRun fails when a registered scenario is in no lab test or no capture run, or
// a list names a scenario that does not exist: a new scenario cannot go untested.
func TestEveryScenarioIsRun(t *testing.T) {
	for what, lists := range map[string][][]string{
		"the lab tests (newLineSteps, oldLineSteps, cloudTests, capiTests, signerTests, authnTests, nodeTests)": {newLineSteps, oldLineSteps, cloudTests, capiTests, signerTests, authnTests, nodeTests},
		"the captures (newLineCaptures, oldLineCaptures)":                                                       {newLineCaptures, oldLineCaptures},
	} {
		all := slices.Concat(lists...)
		for _, s := range scenario.All() {
			name := s.Name
			if _, plain := s.Environment.(scenario.PlainLab); !plain && strings.HasPrefix(what, "the captures") {
				continue
			}
			if !slices.Contains(all, name) {
				t.Errorf("scenario %s is in none of %s", name, what)
			}
		}
		for _, name := range all {
			if _, ok := scenario.Get(name); !ok {
				t.Errorf("%s name %q, which is no scenario", what, name)
			}
		}
	}
}

// onlySteps narrows steps to $CREDWATCH_SCENARIOS (comma-separated) when set, for quick runs: a
// name that is no scenario fails the test, so a typo cannot run nothing and pass; a selection
// that holds none of this test's steps skips it, naming the selection. `make test` refuses to run
// with the variable set.
func onlySteps(t *testing.T, steps []string) []string {
	t.Helper()
	only, set := os.LookupEnv("CREDWATCH_SCENARIOS")
	if !set {
		return steps
	}
	out, err := selectSteps(only, steps)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Skipf("CREDWATCH_SCENARIOS=%q selects none of this test's scenarios (%s)", only, strings.Join(steps, ","))
	}
	return out
}

// selectSteps returns the steps named in the comma-separated list only, or an error when only
// names something that is no scenario.
func selectSteps(only string, steps []string) ([]string, error) {
	selected := strings.Split(only, ",")
	for _, name := range selected {
		if _, ok := scenario.Get(name); !ok {
			return nil, fmt.Errorf("CREDWATCH_SCENARIOS=%q: %q is no scenario (unset it to run all; scenarios: %s)",
				only, name, strings.Join(scenario.Names(), ","))
		}
	}
	var out []string
	for _, s := range steps {
		if slices.Contains(selected, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

func TestSelectSteps(t *testing.T) {
	steps := []string{"key-drift", "clock-skew"}
	tests := []struct {
		only    string
		want    []string
		wantErr bool
	}{
		{only: "clock-skew", want: []string{"clock-skew"}},
		{only: "clock-skew,key-drift", want: steps},
		{only: "mixed-version-roll", want: nil},
		{only: "", wantErr: true},
		{only: "key-drfit", wantErr: true},
		{only: "key-drift,", wantErr: true},
		{only: "key-drift, clock-skew", wantErr: true},
	}
	for _, tt := range tests {
		got, err := selectSteps(tt.only, steps)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("selectSteps(%q) = %v, %v; want %v, error %v", tt.only, got, err, tt.want, tt.wantErr)
		}
	}
}
