// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// runbookURL is where the alerts link the runbook: docs/runbook.md on the main branch.
const runbookURL = "https://github.com/credwatch/credwatch/blob/main/docs/runbook.md#"

// TestAlertRunbookURLs: every alert the chart ships (files/alerts.yaml, the watcher's, and
// deploy/mixin/alerts.yaml, the credential mixin's) has a runbook_url that links a heading of
// docs/runbook.md, so that a page reaches a section that exists.
func TestAlertRunbookURLs(t *testing.T) {
	for _, f := range []string{"../../deploy/helm/credwatch/files/alerts.yaml", "../../deploy/mixin/alerts.yaml"} {
		t.Run(f, func(t *testing.T) { checkRunbookURLs(t, f) })
	}
}

func checkRunbookURLs(t *testing.T, file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `json:"alert"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../" + page)
	if err != nil {
		t.Fatal(err)
	}
	anchors := headingAnchors(string(doc))
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue // a recording rule
			}
			n++
			url := r.Annotations["runbook_url"]
			anchor, ok := strings.CutPrefix(url, runbookURL)
			switch {
			case !ok:
				t.Errorf("%s: runbook_url %q, want %s<section>", r.Alert, url, runbookURL)
			case !anchors[anchor]:
				t.Errorf("%s: runbook_url %q: docs/runbook.md has no heading with the anchor %q", r.Alert, url, anchor)
			}
		}
	}
	if n == 0 {
		t.Fatalf("no alerts in %s", file)
	}
}

// TestHeadingAnchors: the anchors GitHub gives Markdown headings.
func TestHeadingAnchors(t *testing.T) {
	for _, tt := range []struct{ heading, want string }{
		{"# Runbook: from the symptom to the answer", "runbook-from-the-symptom-to-the-answer"},
		{"## 1. Tokens rejected during a roll", "1-tokens-rejected-during-a-roll"},
		{"## 5. Cloud credentials rotated: Deployments get no Pods", "5-cloud-credentials-rotated-deployments-get-no-pods"},
		{"### `lb-sends-to-unready`, member-not-ready", "lb-sends-to-unready-member-not-ready"},
	} {
		if got := headingAnchors(tt.heading + "\n"); !got[tt.want] || len(got) != 1 {
			t.Errorf("%q: anchors %v, want %q", tt.heading, got, tt.want)
		}
	}
	if got := headingAnchors("```sh\n# a comment in a code block\n```\n"); len(got) != 0 {
		t.Errorf("a comment in a code block is a heading: %v", got)
	}
}

var (
	headingLine = regexp.MustCompile(`^#{1,6} +(.+?) *#*$`)
	notInAnchor = regexp.MustCompile(`[^\p{L}\p{N}\- ]`)
)

// headingAnchors are the anchors of the Markdown headings of page, as GitHub makes them: the
// text in lower case, without punctuation but hyphens, spaces as hyphens.
func headingAnchors(page string) map[string]bool {
	anchors := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		m := headingLine.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		a := strings.ReplaceAll(notInAnchor.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		anchors[a] = true
	}
	return anchors
}
