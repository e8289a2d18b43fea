// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/pki"
	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/report"
)

// TestSignerKeyRedacted: a signer's private key that reached the evidence through what the
// scenarios copy from logs (a member's signer lines, check's findings, the notes) is printed by
// -o json and the table only as the redaction marker: report.Print, the one redaction path.
func TestSignerKeyRedacted(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "signer.key")
	if err := pki.NewSAKey(keyFile, filepath.Join(dir, "signer.pub")); err != nil {
		t.Fatal(err)
	}
	pemKey, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(pemKey))
	var body []string // the key's base64 lines
	for _, l := range strings.Split(key, "\n") {
		if !strings.HasPrefix(l, "-----") {
			body = append(body, l)
		}
	}
	line := `E1207 03:40:26.880255   28092 keycache.go:79] when syncing supported public keys(Stale set of keys will be supported): ` + key
	ev := &Evidence{APIVersion: report.APIVersion, Kind: "ScenarioEvidence", Scenario: "signer-stale", Notes: []string{"the signer served " + key},
		Phases: []Phase{{Name: "p", Findings: []string{"signer-keys-stale [apiserver-2]: " + key},
			Members: []MemberEvidence{{Name: "apiserver-2", SignerMessages: countLines([]string{line})}}}}}
	for _, f := range []report.Format{report.JSON, report.Table} {
		var b bytes.Buffer
		if err := report.Print(&b, f, ev); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, l := range body {
			if strings.Contains(out, l) {
				t.Fatalf("-o %s shows the signer's private key:\n%s", f, out)
			}
		}
		if !strings.Contains(out, redact.Marker) || !strings.Contains(out, "Stale set of keys will be supported") {
			t.Errorf("-o %s: want the line with the key redacted:\n%s", f, out)
		}
	}
}
