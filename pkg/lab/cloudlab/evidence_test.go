// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Evidence is committed (docs/evidence): a line that carried a token or a password keeps neither,
// even when it is longer than the cut.
func TestNormaliseRedacts(t *testing.T) {
	t.Parallel()
	sig := strings.Repeat("s", 300)
	tok := "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJpc3MiOiJodHRwczovL2t1YmVybmV0ZXMuZGVmYXVsdC5zdmMifQ." + sig
	for _, line := range []string{
		`E1130 12:00:00.000000   123 vsphere.go:45] login with token ` + tok,
		`2026-11-30T12:00:00Z stderr F I1130 12:00:00.000000   1 config.go:9] read cloud config password="Initial-Passw0rd-1"`,
	} {
		got := normalise(line)
		if strings.Contains(got, sig[:40]) || strings.Contains(got, "Initial-Passw0rd-1") {
			t.Errorf("normalise(%.60q…) keeps a secret: %s", line, got)
		}
	}
}

// TestDocCitesEvidence: every **[era/step]** docs/why-pods-stopped.md cites is a step of a run in
// docs/evidence ("all" is every era), and every era there is cited.
func TestDocCitesEvidence(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "why-pods-stopped.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "docs", "evidence", Name+"-*.json"))
	runs := map[string]*Evidence{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var ev Evidence
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		runs[ev.Era] = &ev
	}
	cited := map[string]bool{}
	for _, m := range regexp.MustCompile(`\*\*\[([\w-]+)/([\w-]+)\]\*\*`).FindAllStringSubmatch(string(doc), -1) {
		if m[1] == "era" {
			continue // the notation itself
		}
		eras := []string{m[1]}
		if m[1] == "all" {
			eras = nil
			for era := range runs {
				eras = append(eras, era)
			}
		}
		for _, era := range eras {
			cited[era] = true
			ev, ok := runs[era]
			if !ok {
				t.Errorf("[%s/%s]: no evidence of era %s in docs/evidence", m[1], m[2], era)
				continue
			}
			if _, ok := ev.Step(m[2]); !ok {
				t.Errorf("[%s/%s]: the %s run has no step %s", m[1], m[2], era, m[2])
			}
		}
	}
	for era := range runs {
		if !cited[era] {
			t.Errorf("docs/why-pods-stopped.md cites nothing of the %s run", era)
		}
	}
}
