// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/finding/sariftest"
	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/report"
)

// TestLogsSARIF: `logs -o sarif` validates against SARIF 2.1.0, clean or not; every classified
// line the report keeps is a result whose physicalLocation is its file and line (the line there
// is the evidence line), whose rule is its cause and is among the rules; the log is the same,
// fingerprints included, however the input is cut into blocks and workers.
func TestLogsSARIF(t *testing.T) {
	t.Parallel()
	paths := []string{"testdata/mixed.log", "testdata/seed-000.log", "testdata/field-mixed.log"}
	run := func(cfg logs.Config, paths ...string) ([]byte, *logs.Report) {
		r := analyzeFiles(t, cfg, paths...)
		var b bytes.Buffer
		if err := report.Print(&b, report.SARIF, New(r)); err != nil {
			t.Fatal(err)
		}
		return b.Bytes(), r
	}
	out, r := run(logs.Config{Year: 2026, Workers: 2}, paths...)
	doc := sariftest.DecodeBytes(t, out)
	sariftest.Validate(t, doc)
	results := sariftest.Results(doc)
	if len(results) != len(r.Events) || len(results) == 0 {
		t.Fatalf("%d results for %d events", len(results), len(r.Events))
	}
	rules := map[string]bool{}
	for _, ru := range doc.(map[string]any)["runs"].([]any)[0].(map[string]any)["tool"].(map[string]any)["driver"].(map[string]any)["rules"].([]any) {
		rules[ru.(map[string]any)["id"].(string)] = true
	}
	lines := map[string][]string{}
	for _, p := range paths {
		lines[p] = fileLines(t, p)
	}
	for i, res := range results {
		ev := r.Events[i]
		m := res.(map[string]any)
		if m["ruleId"] != ev.Cause || !rules[ev.Cause] {
			t.Errorf("result %d: rule %v, event cause %s (in rules: %v)", i, m["ruleId"], ev.Cause, rules[ev.Cause])
		}
		pl := m["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)
		uri := pl["artifactLocation"].(map[string]any)["uri"].(string)
		var line int
		if err := json.Unmarshal([]byte(pl["region"].(map[string]any)["startLine"].(json.Number)), &line); err != nil {
			t.Fatal(err)
		}
		if uri != ev.Input || int64(line) != ev.LineNumber {
			t.Errorf("result %d at %s:%d, event at %s:%d", i, uri, line, ev.Input, ev.LineNumber)
			continue
		}
		if got := lines[uri][line-1]; asEvidence(got) != ev.Line {
			t.Errorf("%s:%d is\n%s\nnot the evidence line\n%s", uri, line, got, ev.Line)
		}
		if msg := m["message"].(map[string]any)["text"].(string); !strings.HasSuffix(msg, ": "+ev.Line) {
			t.Errorf("result %d: message %q does not end with the line", i, msg)
		}
	}
	again, _ := run(logs.Config{Year: 2026, Workers: 3, BlockSize: 4 << 10}, paths...)
	if !bytes.Equal(out, again) {
		t.Errorf("another run (other blocks and workers) gives another SARIF log")
	}
}

// TestLogsSARIFClean: a log without a classified line is a valid SARIF log with no rule.
func TestLogsSARIFClean(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "quiet.log")
	if err := os.WriteFile(p, []byte("I1202 14:03:05.123456       1 main.go:1] all is well\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := analyzeFiles(t, logs.Config{Year: 2026}, p)
	doc := sariftest.Decode(t, New(r).SARIF())
	sariftest.Validate(t, doc)
	driver := doc.(map[string]any)["runs"].([]any)[0].(map[string]any)["tool"].(map[string]any)["driver"].(map[string]any)
	if rules, ok := driver["rules"].([]any); !ok || len(rules) != 0 || len(sariftest.Results(doc)) != 0 {
		t.Errorf("clean run: rules %v, results %v", driver["rules"], sariftest.Results(doc))
	}
	if driver["name"] != "credwatch logs" || driver["version"] != "dev" {
		t.Errorf("driver %v", driver)
	}
}

// asEvidence is a line as logs keeps it as evidence: redacted, then clipped.
func asEvidence(s string) string { return clip(redact.Text(strings.TrimRight(s, "\r")), 4096) }

// fileLines are the lines of path (relative: pkg/logs's).
func fileLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(inLogs([]string{path})[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// clip cuts s to n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
