// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package promtool unit-tests the Helm chart's alert rules and the credential mixin with
// Prometheus's own promtool (github.com/prometheus/prometheus/cmd/promtool, pinned in go.mod as a
// tool). The service discovery plugins are left out of the build (-tags=remove_all_sd): rule tests
// need none. go.mod pins the Prometheus server (cmd/prometheus) the same way:
// deploy/mixin's TestIntegrationPrometheusScenarios builds it from this module (make
// test-mixin-prometheus).
package promtool

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func promtool(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"tool", "promtool"}, args...)...)
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -tags=remove_all_sd"))
	out, err := cmd.CombinedOutput()
	t.Logf("promtool %v:\n%s", args, out)
	if err != nil {
		t.Fatalf("promtool %v: %v", args, err)
	}
}

// TestAlertRules: every rule file is valid (the watcher's, the credential mixin's and the chart's
// copy of it) and every alert fires (and stays quiet) as the rule tests expect:
// alerts_test.yaml on series from the watcher's own registry, lab_alerts_test.yaml on series
// scraped from a watcher on a real lab (both written by hack/helm's tests),
// mixin_lab_alerts_test.yaml and mixin_authn_alerts_test.yaml on series scraped from real
// kube-apiserver members during key drift and authentication-configuration faults (written by
// deploy/mixin's TestPromtoolTests and TestAuthnPromtoolTests from its lab recordings).
func TestAlertRules(t *testing.T) {
	promtool(t, "check", "rules", "../../deploy/helm/credwatch/files/alerts.yaml", "../../deploy/helm/credwatch/files/mixin.yaml",
		"../../deploy/mixin/alerts.yaml", "../../deploy/mixin/rules.yaml")
	tests, err := filepath.Glob("*alerts_test.yaml")
	if err != nil || len(tests) == 0 {
		t.Fatalf("no rule tests (%v)", err)
	}
	promtool(t, append([]string{"test", "rules"}, tests...)...)
}
