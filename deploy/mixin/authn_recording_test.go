// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package mixin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/deploy/mixin"
	"github.com/credwatch/credwatch/internal/golden"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

const (
	authnRecordingFile = "testdata/authn-config.json"
	authnRecordFile    = "../../hack/promtool/mixin_authn_alerts_test.yaml"
)

// authnRecording is what TestIntegrationRecordAuthnConfig scraped: the structured-authentication
// series of two members, one per member and series, after the second member's reload failed.
type authnRecording struct {
	Scenario string            `json:"scenario"`
	Members  []string          `json:"members"` // instance labels
	Failed   string            `json:"failed"`  // the member whose reload failed
	Series   map[string]string `json:"series"`  // series → its value
}

func writeAuthnConfig(t *testing.T, path, issuer string) {
	t.Helper()
	data := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: %s
    audiences: [mixin-test]
  claimMappings:
    username:
      claim: sub
      prefix: "mixin-test:"
`, issuer)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationRecordAuthnConfig records, from real v1.36.3 members, the series of two
// authentication-configuration faults: two members run different --authentication-config files
// (config drift), then one's file is changed to one it cannot load (a failed reload). It writes
// testdata/authn-config.json, which TestAuthnPromtoolTests turns into
// hack/promtool/mixin_authn_alerts_test.yaml. It runs only with -args -record (a few minutes).
func TestIntegrationRecordAuthnConfig(t *testing.T) {
	if !*record {
		t.Skip("records " + authnRecordingFile + ": go test ./deploy/mixin -run TestIntegrationRecordAuthnConfig -args -record")
	}
	l := labtest.Start(t, lab.Options{Members: 1})
	dir := t.TempDir()
	cfgA, cfgB := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	writeAuthnConfig(t, cfgA, "https://127.0.0.1:9/a")
	writeAuthnConfig(t, cfgB, "https://127.0.0.1:9/b")
	var names []string
	for _, cfg := range []string{cfgA, cfgB} {
		m, err := l.AddMember(context.Background(), lab.MemberOptions{ExtraArgs: []string{"--authentication-config=" + cfg}})
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, m.Name)
	}
	// A file the member cannot load: a JWT issuer must be https.
	writeAuthnConfig(t, cfgB, "http://127.0.0.1:9/b")
	failed := names[1]
	families := []string{mixin.AuthnConfigInfo.Name, mixin.AuthnConfigReloadTime.Name, mixin.AuthnConfigReloads.Name}
	rec := authnRecording{Scenario: "authn-config", Failed: instance(t, l, failed)}
	for deadline := time.Now().Add(4 * time.Minute); ; time.Sleep(5 * time.Second) {
		f := scrape(t, l, failed)[mixin.AuthnConfigReloadTime.Name]
		if f != nil && strings.Contains(f.String(), `value:"failure"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not report a failed reload within 4 minutes", failed)
		}
	}
	rec.Series = map[string]string{}
	for _, n := range names {
		inst := instance(t, l, n)
		rec.Members = append(rec.Members, inst)
		fams := scrape(t, l, n)
		for _, name := range families {
			for _, s := range fams[name].GetMetric() {
				rec.Series[seriesKey(name, inst, s)] = strconv.FormatFloat(sampleValue(s), 'f', -1, 64)
			}
		}
	}
	data, err := json.MarshalIndent(rec, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(authnRecordingFile, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d series; now run go test ./deploy/mixin -run TestAuthnPromtoolTests -args -update", authnRecordingFile, len(rec.Series))
}

// TestAuthnPromtoolTests: hack/promtool/mixin_authn_alerts_test.yaml is the recorded
// authentication-configuration faults (testdata/authn-config.json), each series held at its
// recorded value for 20 minutes, with what must fire: CredwatchAuthenticationConfigDrift for both
// members, each with its own hash, and CredwatchAuthenticationConfigReloadFailed for the member
// whose reload failed; nothing else.
func TestAuthnPromtoolTests(t *testing.T) {
	data, err := os.ReadFile(authnRecordingFile)
	if err != nil {
		t.Fatal(err)
	}
	var rec authnRecording
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%s: %v", authnRecordingFile, err)
	}
	groups, err := mixin.Groups(mixin.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString(`# promtool test rules for the credential mixin (deploy/mixin), run by promtool_test.go, on series
# recorded from real v1.36.3 members: two run different --authentication-config files, then the
# second's file is changed to one it cannot load (deploy/mixin/testdata/authn-config.json, recorded
# by TestIntegrationRecordAuthnConfig; each series held at its recorded value). Generated by
# deploy/mixin's TestAuthnPromtoolTests; do not edit (go test ./deploy/mixin -run
# TestAuthnPromtoolTests -args -update).
evaluation_interval: 15s
rule_files:
- ../../deploy/mixin/rules.yaml
- ../../deploy/mixin/alerts.yaml
tests:
- interval: 15s
  input_series:
`)
	// firing: alert → the recorded series whose labels the alert carries.
	firing := map[string][]string{}
	for _, k := range slices.Sorted(maps.Keys(rec.Series)) {
		fmt.Fprintf(&b, "  - series: '%s'\n    values: '%s+0x80'\n", k, rec.Series[k])
		switch {
		case strings.HasPrefix(k, mixin.AuthnConfigInfo.Name+"{"):
			firing["CredwatchAuthenticationConfigDrift"] = append(firing["CredwatchAuthenticationConfigDrift"], k)
		case strings.HasPrefix(k, mixin.AuthnConfigReloadTime.Name+"{") && strings.Contains(k, `status="failure"`):
			firing["CredwatchAuthenticationConfigReloadFailed"] = append(firing["CredwatchAuthenticationConfigReloadFailed"], k)
		}
	}
	if len(firing["CredwatchAuthenticationConfigDrift"]) != 2 || len(firing["CredwatchAuthenticationConfigReloadFailed"]) != 1 {
		t.Fatalf("%s: want 2 last_config_info series and 1 failed reload, have %v", authnRecordingFile, firing)
	}
	b.WriteString("  alert_rule_test:\n")
	for _, g := range groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			fmt.Fprintf(&b, "  - alertname: %s\n    eval_time: 16m\n", r.Alert)
			if len(firing[r.Alert]) == 0 {
				b.WriteString("    exp_alerts: []\n")
				continue
			}
			b.WriteString("    exp_alerts:\n")
			for _, k := range firing[r.Alert] {
				writeExpAlert(&b, r, seriesLabels(k))
			}
		}
	}
	golden.Check(t, authnRecordFile, b.Bytes(), *update)
}

// writeExpAlert writes one expected alert of r with labels (the alert's, but severity), its
// annotations rendered with them.
func writeExpAlert(b *bytes.Buffer, r mixin.Rule, labels map[string]string) {
	labels = maps.Clone(labels)
	labels["severity"] = r.Severity
	var ls []string
	for _, n := range slices.Sorted(maps.Keys(labels)) {
		ls = append(ls, fmt.Sprintf("%s: %q", n, labels[n]))
	}
	q := func(s string) string {
		for n, v := range labels {
			s = strings.ReplaceAll(s, "{{ $labels."+n+" }}", v)
		}
		return strconv.Quote(s)
	}
	fmt.Fprintf(b, "    - exp_labels: {%s}\n", strings.Join(ls, ", "))
	fmt.Fprintf(b, "      exp_annotations:\n        summary: %s\n        description: %s\n        runbook_url: %q\n",
		q(r.Summary), q(r.Description), mixin.DefaultConfig().RunbookURL+"#"+r.Runbook)
}

// seriesLabels parses the labels of a series written by seriesKey.
func seriesLabels(key string) map[string]string {
	out := map[string]string{}
	_, rest, _ := strings.Cut(key, "{")
	for _, p := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
		n, v, _ := strings.Cut(p, "=")
		if uq, err := strconv.Unquote(v); err == nil {
			out[n] = uq
		}
	}
	return out
}
