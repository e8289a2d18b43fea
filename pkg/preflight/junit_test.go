// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"bytes"
	"encoding/xml"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
)

// TestPredictionIDs: the JUnit test cases are exactly the IDs the checks report.
func TestPredictionIDs(t *testing.T) {
	var inCode []string
	for _, file := range []string{"checks.go", "inplace.go", "signer.go"} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`finding\.New\("([a-z-]+)"`).FindAllSubmatch(src, -1) {
			inCode = append(inCode, string(m[1]))
		}
	}
	slices.Sort(inCode)
	inCode = slices.Compact(inCode)
	got := slices.Sorted(slices.Values(predictions()))
	if !slices.Equal(got, inCode) {
		t.Errorf("predictions() %v, checks.go reports %v", got, inCode)
	}
}

// TestJUnit: one case per prediction; a finding at or above --fail-on fails its case, one below
// does not.
func TestJUnit(t *testing.T) {
	r := &Report{FailOn: catalogue.Warning, Findings: []finding.Finding{
		finding.New("sa-key-change", "key differs"), finding.New("rollout-planned", "3 of 3 roll")}}
	var b bytes.Buffer
	if err := r.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Cases    []struct {
			Name     string     `xml:"name,attr"`
			Failures []struct{} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(b.Bytes(), &suite); err != nil {
		t.Fatal(err)
	}
	if suite.Tests != len(predictions()) {
		t.Errorf("%d cases, want %d", suite.Tests, len(predictions()))
	}
	for _, c := range suite.Cases {
		want := 0
		if c.Name == "sa-key-change" && catalogue.Default().MustGet("sa-key-change").Severity.AtLeast(catalogue.Warning) {
			want = 1
		}
		if c.Name == "rollout-planned" && catalogue.Default().MustGet("rollout-planned").Severity.AtLeast(catalogue.Warning) {
			want = 1
		}
		if len(c.Failures) != want {
			t.Errorf("case %s: %d failures, want %d", c.Name, len(c.Failures), want)
		}
	}
}
