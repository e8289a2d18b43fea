// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/report"
)

// TestReportTableGolden renders the table of every test config, without logins or a cluster.
func TestReportTableGolden(t *testing.T) {
	cfgs, errs := LoadPaths([]string{"testdata/configs"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r := Judge(Fetch(context.Background(), FetchOptions{Configs: cfgs, NoLogin: true, Now: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)}), "")
	var buf bytes.Buffer
	if err := r.WriteTable(&buf, report.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "golden", "report-no-login.txt")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("table differs from %s:\n%s", golden, buf.String())
	}
	if bytes.Contains(buf.Bytes(), []byte("occm-pass")) || bytes.Contains(buf.Bytes(), []byte("csi-pass")) {
		t.Error("a password was printed")
	}
}

// TestJUnitUntestedSkipped: with --no-login no credential was tried, so none may count as a
// passing test: each is a <skipped/> case saying why, unless a finding fails it anyway.
func TestJUnitUntestedSkipped(t *testing.T) {
	cfgs, errs := LoadPaths([]string{"testdata/configs"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r := Judge(Fetch(context.Background(), FetchOptions{Configs: cfgs, NoLogin: true, Now: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)}), "")
	var buf bytes.Buffer
	if err := r.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Tests   int `xml:"tests,attr"`
		Skipped int `xml:"skipped,attr"`
		Cases   []struct {
			Name     string     `xml:"name,attr"`
			Skipped  *struct{}  `xml:"skipped"`
			Failures []struct{} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &suite); err != nil {
		t.Fatal(err)
	}
	if len(r.Items) == 0 {
		t.Fatal("no credentials in testdata/configs")
	}
	for _, c := range suite.Cases {
		if c.Name == "inputs" || c.Name == "symptoms" {
			continue
		}
		if c.Skipped == nil && len(c.Failures) == 0 {
			t.Errorf("case %q passes although no login tested it", c.Name)
		}
		if c.Skipped != nil && len(c.Failures) > 0 {
			t.Errorf("case %q is both skipped and failed", c.Name)
		}
	}
	if suite.Skipped == 0 {
		t.Errorf("no case skipped of %d:\n%s", suite.Tests, buf.String())
	}
}
