// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package finding

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"strconv"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// Tool names the program that produced a SARIF log: tool.driver.name and tool.driver.version.
type Tool struct {
	Name    string // "credwatch check"
	Version string // credwatch's own version, as `credwatch version` prints it
}

// fingerprintKey is the partialFingerprints key of a result: a hash of what identifies a finding
// across runs (its ID, member and object, and the file and line it was read from), never of its
// message, which carries times and counts.
const fingerprintKey = "credwatchFinding/v1"

// SARIF renders findings as a SARIF 2.1.0 log with one rule per catalogue ID used. The log
// validates against the 2.1.0 schema (TestSARIFSchema): rules is [] when nothing was found, and
// every result carries a partial fingerprint that is the same for the same finding on every run,
// so that a code-scanning service tracks it instead of opening a new alert each time. A finding
// with a Location gets a physicalLocation: the file as a URI reference and the line.
func SARIF(tool Tool, fs []Finding) any {
	type msg struct {
		Text string `json:"text"`
	}
	type rule struct {
		ID               string `json:"id"`
		Name             string `json:"name"`
		ShortDescription msg    `json:"shortDescription"`
		FullDescription  msg    `json:"fullDescription"`
		Help             msg    `json:"help"`
	}
	type region struct {
		StartLine int64 `json:"startLine"`
	}
	type physical struct {
		ArtifactLocation map[string]string `json:"artifactLocation"`
		Region           *region           `json:"region,omitempty"`
	}
	type location struct {
		PhysicalLocation *physical           `json:"physicalLocation,omitempty"`
		LogicalLocations []map[string]string `json:"logicalLocations,omitempty"`
	}
	type result struct {
		RuleID              string            `json:"ruleId"`
		Level               string            `json:"level"`
		Message             msg               `json:"message"`
		Locations           []location        `json:"locations,omitempty"`
		PartialFingerprints map[string]string `json:"partialFingerprints"`
	}
	rules := []rule{}
	seen := map[string]bool{}
	results := make([]result, 0, len(fs))
	for _, f := range fs {
		if !seen[f.ID] {
			seen[f.ID] = true
			rules = append(rules, rule{ID: f.ID, Name: f.ID, ShortDescription: msg{f.Title},
				FullDescription: msg{f.Explanation}, Help: msg{f.Remedy}})
		}
		r := result{RuleID: f.ID, Level: sarifLevel(f.Severity), Message: msg{f.Message},
			PartialFingerprints: map[string]string{fingerprintKey: fingerprint(f)}}
		var loc location
		if f.Member != "" || f.Object != "" {
			name := f.Member
			if f.Object != "" {
				name = f.Object
			}
			loc.LogicalLocations = []map[string]string{{"name": name, "kind": "resource"}}
		}
		if l := f.Location; l != nil {
			loc.PhysicalLocation = &physical{ArtifactLocation: map[string]string{"uri": fileURI(l.File)}}
			if l.Line > 0 {
				loc.PhysicalLocation.Region = &region{StartLine: l.Line}
			}
		}
		if loc.PhysicalLocation != nil || loc.LogicalLocations != nil {
			r.Locations = []location{loc}
		}
		results = append(results, r)
	}
	version := tool.Version
	if version == "" {
		version = "dev"
	}
	return map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool":    map[string]any{"driver": map[string]any{"name": tool.Name, "version": version, "rules": rules}},
			"results": results,
		}},
	}
}

// Invocation is how a run ended, SARIF's invocations[0]. A run that did not complete (an
// unreachable cluster, bad input) is not successful whatever it found; Message says why.
type Invocation struct {
	Successful bool
	ExitCode   int
	Message    string // why the run failed, already redacted; "" when it did not
}

// WithInvocation adds inv to the run of log, a log SARIF returned, and returns it. A failed run
// carries its reason as an error toolExecutionNotification, where code-scanning services show it.
func WithInvocation(log any, inv Invocation) any {
	m, ok := log.(map[string]any)
	if !ok {
		return log
	}
	run, ok := m["runs"].([]any)[0].(map[string]any)
	if !ok {
		return log
	}
	i := map[string]any{"executionSuccessful": inv.Successful, "exitCode": inv.ExitCode}
	if inv.Message != "" {
		i["toolExecutionNotifications"] = []any{map[string]any{"level": "error", "message": map[string]string{"text": inv.Message}}}
	}
	run["invocations"] = []any{i}
	return log
}

// fingerprint hashes a finding's identity: ID, member and object, and its file and line.
func fingerprint(f Finding) string {
	id := f.ID + "\x00" + f.Member + "\x00" + f.Object
	if l := f.Location; l != nil {
		id += "\x00" + l.File + "\x00" + strconv.FormatInt(l.Line, 10)
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:16])
}

// fileURI is a file as SARIF's artifactLocation.uri, a URI reference: a relative path stays
// relative (escaped), an absolute one is a file: URI.
func fileURI(name string) string {
	p := filepath.ToSlash(name)
	if path.IsAbs(p) {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}

func sarifLevel(s catalogue.Severity) string {
	switch s {
	case catalogue.Critical, catalogue.Error:
		return "error"
	case catalogue.Warning:
		return "warning"
	default:
		return "note"
	}
}

// WriteJUnitError renders a run that did not complete as JUnit XML: one failing test case, "run",
// whose message is why (already redacted), so that a pipeline reading the file sees the failure.
func WriteJUnitError(w io.Writer, suite, message string) error {
	f := Finding{ID: "run-failed", Severity: catalogue.Critical, Title: suite + " did not complete",
		Message: message, Explanation: message, Remedy: "see the exit code in docs/exit-codes.md"}
	return WriteJUnit(w, suite, []string{"run"}, map[string][]Finding{"run": {f}}, nil, catalogue.Critical)
}

// WriteJUnit renders checks as JUnit XML: one test case per check name, failed when it has a
// finding at or above failOn. checks maps each check that ran to its findings; skipped maps a
// check that did not run to why.
func WriteJUnit(w io.Writer, suite string, order []string, checks map[string][]Finding, skipped map[string]string, failOn catalogue.Severity) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	type skip struct {
		Message string `xml:"message,attr"`
	}
	type tc struct {
		Name      string    `xml:"name,attr"`
		ClassName string    `xml:"classname,attr"`
		Failures  []failure `xml:"failure,omitempty"`
		Skipped   *skip     `xml:"skipped,omitempty"`
	}
	type ts struct {
		XMLName  xml.Name `xml:"testsuite"`
		Name     string   `xml:"name,attr"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Skipped  int      `xml:"skipped,attr"`
		Cases    []tc     `xml:"testcase"`
	}
	out := ts{Name: suite}
	for _, name := range order {
		c := tc{Name: name, ClassName: suite}
		if why, ok := skipped[name]; ok {
			c.Skipped = &skip{Message: why}
			out.Skipped++
		}
		for _, f := range checks[name] {
			if f.Severity.AtLeast(failOn) {
				c.Failures = append(c.Failures, failure{Message: f.Message, Type: f.ID,
					Text: fmt.Sprintf("%s [%s]\n%s\nRemedy: %s", f.Title, f.Severity, f.Explanation, f.Remedy)})
			}
		}
		if len(c.Failures) > 0 {
			out.Failures++
		}
		out.Tests++
		out.Cases = append(out.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("render junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
