// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/app"
	"github.com/credwatch/credwatch/internal/cli"
)

const page = "docs/runbook.md"

// volatile are the parts of an output that differ between runs and machines; both sides are
// normalised before comparing.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?Z?`), "<time>"},
	{regexp.MustCompile(`\b\d\d:\d\d:\d\d(\.\d+)?\b`), "<clock>"},
	{regexp.MustCompile(`\b(127|10)\.\d+\.\d+\.\d+(:\d+)?\b`), "<address>"},
	{regexp.MustCompile(`:<port>|:\d{4,5}\b`), ":<port>"},
	{regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s|m|h)(\d+(\.\d+)?(ms|s|m))*\b`), "<duration>"},
	{regexp.MustCompile(`/tmp/runbook-[^/\s]+`), "<tmp>"},
}

func normalise(b []byte) string {
	s := string(b)
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

// TestRunbookCurrent: docs/runbook.md is what the current code prints for the committed inputs.
// It re-renders snapshots, logs, tokens and field lines (no lab); the cloud section logs in to
// an in-process vcsim.
func TestRunbookCurrent(t *testing.T) {
	t.Chdir("../..")
	got, err := render(context.Background())
	if err != nil {
		t.Fatalf("render the runbook: %v (run make docs to see the same error)", err)
	}
	have, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("%v: run make docs", err)
	}
	if g, h := normalise(got), normalise(have); g != h {
		t.Errorf("%s is stale: the current code prints something else; run make docs\n%s", page, firstDiff(h, g))
	}
}

// firstDiff shows the first line that differs, with its neighbours.
func firstDiff(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(h), len(w)); i++ {
		var hl, wl string
		if i < len(h) {
			hl = h[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if hl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n  committed: " + hl + "\n  generated: " + wl
		}
	}
	return ""
}

// TestExplainSameRemedy: every remedy the runbook quotes is the text `credwatch explain ID`
// prints, and the page quotes it.
func TestExplainSameRemedy(t *testing.T) {
	t.Chdir("../..")
	have, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("%v: run make docs", err)
	}
	ids := regexp.MustCompile(`\{\{remedy "([a-z0-9-]+)"\}\}`).FindAllStringSubmatch(pageTemplate, -1)
	if len(ids) < 6 {
		t.Fatalf("the template quotes %d remedies; want one per symptom family at least", len(ids))
	}
	for _, m := range ids {
		id := m[1]
		want, err := remedy(id)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err = app.Run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out}, []string{"credwatch", "explain", id})
		if err != nil {
			t.Fatalf("credwatch explain %s: %v", id, err)
		}
		if !strings.Contains(out.String(), "Remedy:\n  "+want+"\n") {
			t.Errorf("credwatch explain %s does not print the runbook's remedy %q:\n%s", id, want, out.String())
		}
		if !strings.Contains(string(have), "(`credwatch explain "+id+"`)") || !strings.Contains(string(have), "> "+want+"\n") {
			t.Errorf("%s does not quote the remedy of %s: run make docs", page, id)
		}
	}
}

// TestMessagesFindTheirSection: a reader who searches the page for a listed message meets it
// first in its section, or in the symptom table's row that links there.
func TestMessagesFindTheirSection(t *testing.T) {
	t.Chdir("../..")
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("%v: run make docs", err)
	}
	doc := string(b)
	tests := []struct {
		message string
		section int
	}{
		{"Unauthorized", 1},
		{"401 Unauthorized", 1},
		{"the server has asked for the client to provide credentials", 1},
		{"error: You must be logged in to the server (Unauthorized)", 1},
		{"invalid signature, no keys found", 1},
		{"square/go-jose: error in cryptographic primitive", 1},
		{"go-jose/go-jose: error in cryptographic primitive", 1},
		{`[certs] Generating "sa" key and public key`, 1},
		{"invalid bearer token", 2},
		{"is invalid for the target audiences", 2},
		{"service account token has expired", 3},
		{"service account token has been invalidated", 3},
		{"does not match claim", 3},
		{"service account token is not valid yet", 3},
		{"service account token is issued in the future", 3},
		{`claim "iss" is invalid`, 4},
		{"service account unauthorized; this could mean it has been deleted or recreated with a new token", 4},
		{"failed to validate the JWT", 4},
		{"InvalidIdentityToken", 4},
		{"No OpenIDConnect provider found", 4},
		{"Not authorized to perform sts:AssumeRoleWithWebIdentity", 4},
		{"Deployments get no Pods", 5},
		{"Cannot complete login due to an incorrect user name or password.", 5},
		{"InvalidLogin", 5},
		{"node.cloudprovider.kubernetes.io/uninitialized", 5},
		{"failed to get instance metadata for node", 5},
		{"the controller manager logs `Unauthorized`", 6},
		{"failed to discover resources: Unauthorized", 6},
		{"leaderelection lost", 6},
		{"context deadline exceeded", 8},
		{"the server was unable to return a response in the time allotted", 8},
		{"INTERNAL_ERROR; received from peer", 8},
		{"lb-sends-to-unready", 8},
		{"member-not-ready", 8},
		{"auth-failures-rising", 8},
		{"own-requests-refused", 8},
		{"Cluster certificate for sa is not available, please check cluster certificate secrets", 9},
		{"Certificates are missing or unknown, can't join a new machine", 9},
		{"capi-roll-blocked", 9},
	}
	// Section 0 is the upgrade checklist (preflight first), 1-9 the symptoms.
	heads := regexp.MustCompile(`(?m)^## (\d)\. `).FindAllStringSubmatchIndex(doc, -1)
	if len(heads) != 10 {
		t.Fatalf("%s has %d numbered sections, want 10", page, len(heads))
	}
	sectionAt := func(off int) int {
		n := 0
		for _, h := range heads {
			if h[0] <= off {
				n = int(doc[h[2]] - '0')
			}
		}
		return n
	}
	for _, tt := range tests {
		i := strings.Index(doc, tt.message)
		if i < 0 {
			t.Errorf("%q is not on the page", tt.message)
			continue
		}
		got := sectionAt(i)
		if got == 0 { // before the first section: the symptom table's row must link to it
			end := strings.IndexByte(doc[i:], '\n')
			row := doc[i : i+end]
			if !strings.Contains(row, "](#"+strconv.Itoa(tt.section)+"-") {
				t.Errorf("%q is first found in the symptom table, in a row that does not link to section %d", tt.message, tt.section)
			}
		} else if got != tt.section {
			t.Errorf("%q is first found in section %d, want %d", tt.message, got, tt.section)
		}
		// and in the section itself, so the reader who follows the link finds it there too
		start, end := heads[tt.section][0], len(doc)
		if tt.section+1 < len(heads) {
			end = heads[tt.section+1][0]
		}
		if !strings.Contains(doc[start:end], tt.message) {
			t.Errorf("%q is not in section %d", tt.message, tt.section)
		}
	}
}

// TestChecklistNamesHaveSections: every event and finding the README's roll checklist tells the
// reader to watch for is explained in a numbered section of the runbook, not only named.
func TestChecklistNamesHaveSections(t *testing.T) {
	t.Chdir("../..")
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(readme, []byte("**Watch for**"))
	if i < 0 {
		t.Fatal("README.md has no **Watch for** step")
	}
	step := readme[i:]
	if j := bytes.Index(step, []byte("\n4.")); j > 0 {
		step = step[:j]
	}
	names := regexp.MustCompile("`([a-z]+(?:-[a-z]+)+)`").FindAllSubmatch(step, -1)
	if len(names) < 8 {
		t.Fatalf("%d names in the README's Watch for step", len(names))
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	first := regexp.MustCompile(`(?m)^## 1\. `).FindIndex(b)
	if first == nil {
		t.Fatal("no section 1")
	}
	body := string(b[first[0]:])
	for _, n := range names {
		if !strings.Contains(body, "`"+string(n[1])+"`") {
			t.Errorf("the README's checklist names %s; no numbered section of %s explains it", n[1], page)
		}
	}
}
