package finding

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// SARIF renders findings as a SARIF 2.1.0 log with one rule per catalogue ID used.
func SARIF(tool, version string, fs []Finding) any {
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
	type location struct {
		LogicalLocations []map[string]string `json:"logicalLocations"`
	}
	type result struct {
		RuleID    string     `json:"ruleId"`
		Level     string     `json:"level"`
		Message   msg        `json:"message"`
		Locations []location `json:"locations,omitempty"`
	}
	var rules []rule
	seen := map[string]bool{}
	results := make([]result, 0, len(fs))
	for _, f := range fs {
		if !seen[f.ID] {
			seen[f.ID] = true
			rules = append(rules, rule{ID: f.ID, Name: f.ID, ShortDescription: msg{f.Title},
				FullDescription: msg{f.Explanation}, Help: msg{f.Remedy}})
		}
		r := result{RuleID: f.ID, Level: sarifLevel(f.Severity), Message: msg{f.Message}}
		if f.Member != "" || f.Object != "" {
			name := f.Member
			if f.Object != "" {
				name = f.Object
			}
			r.Locations = []location{{LogicalLocations: []map[string]string{{"name": name, "kind": "resource"}}}}
		}
		results = append(results, r)
	}
	return map[string]any{
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"version": "2.1.0",
		"runs": []any{map[string]any{
			"tool":    map[string]any{"driver": map[string]any{"name": tool, "version": version, "rules": rules}},
			"results": results,
		}},
	}
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
