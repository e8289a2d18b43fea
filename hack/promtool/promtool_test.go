// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package promtool unit-tests the Helm chart's alert rules and the credential mixin with
// Prometheus's own promtool (github.com/prometheus/prometheus/cmd/promtool, pinned in go.mod as a
// tool). hack/tools.sh builds it once per machine (make tools), without the service discovery
// plugins (-tags=remove_all_sd): rule tests need none. go.mod pins the Prometheus server
// (cmd/prometheus) the same way: deploy/mixin's TestIntegrationPrometheusScenarios runs
// hack/tools.sh's build of it (make test-mixin-prometheus).
package promtool

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func promtool(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(tool(t, "promtool"), args...).CombinedOutput()
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

// tool is the path of hack/tools.sh's build of the pinned tool name, built first if missing
// (github.com/credwatch/credwatch/internal/toolcache.Path, in a module this one does not require).
func tool(t *testing.T, name string) string {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command("../tools.sh", "-p", name)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/tools.sh -p %s: %v\n%s", name, err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out))
}
