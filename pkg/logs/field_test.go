// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs/cause"
	"sigs.k8s.io/yaml"
)

// fieldLine is one verbatim line of the field corpus (testdata/field/*.yaml).
type fieldLine struct {
	Line      string `json:"line"`
	URL       string `json:"url"`
	Cause     string `json:"cause"`
	Component string `json:"component"`
	From      string `json:"from,omitempty"`
	Note      string `json:"note,omitempty"`
}

type fieldFamily struct {
	Family      string      `json:"family"`
	Description string      `json:"description"`
	Lines       []fieldLine `json:"lines"`
}

// fieldPassRate is the share of corpus lines that must classify to their cause and component.
const fieldPassRate = 0.95

func loadFieldCorpus(t *testing.T) []fieldFamily {
	t.Helper()
	fams, _ := loadYAMLDir[fieldFamily](t, filepath.Join("testdata", "field"))
	return fams
}

// loadYAMLDir decodes every *.yaml file of dir strictly, in name order, with the files' base
// names; it fails the test when there is none.
func loadYAMLDir[T any](t *testing.T, dir string) ([]T, []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no YAML files under %s (%v)", dir, err)
	}
	sort.Strings(files)
	out := make([]T, len(files))
	names := make([]string, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(b, &out[i]); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		names[i] = filepath.Base(f)
	}
	return out, names
}

// TestFieldCorpus runs every line copied from public issue threads through the classifier: each
// must name the cause its thread shows and the component that logged or relayed it. A few lines
// cannot be attributed from the line alone (the thread knows more); the test requires 95 % and
// lists every miss.
func TestFieldCorpus(t *testing.T) {
	t.Parallel()
	cat := catalogue.Default()
	cl := cause.NewClassifier(cat)
	ref := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	total, pass := 0, 0
	var misses []string
	for _, fam := range loadFieldCorpus(t) {
		for i, fl := range fam.Lines {
			if fl.Line == "" || fl.URL == "" || fl.Cause == "" || fl.Component == "" {
				t.Errorf("%s line %d: line, url, cause and component are required", fam.Family, i+1)
				continue
			}
			if _, ok := cat.Get(fl.Cause); !ok {
				t.Errorf("%s line %d: cause %q is not in the catalogue", fam.Family, i+1, fl.Cause)
			}
			total++
			ev, ok := Classify(cl, parseRecord(fl.Line, lineHint{component: fl.From, ref: ref}))
			got, comp := "(none)", ""
			if ok {
				got, comp = ev.Cause, ev.Component
			}
			if got == fl.Cause && comp == fl.Component {
				pass++
				continue
			}
			misses = append(misses, fam.Family+": got "+got+"/"+comp+", want "+fl.Cause+"/"+fl.Component+
				" ("+fl.URL+"): "+truncateForLog(fl.Line, 160))
		}
	}
	rate := float64(pass) / float64(max(total, 1))
	t.Logf("field corpus: %d/%d lines (%.1f %%) name the thread's cause and component", pass, total, 100*rate)
	for _, m := range misses {
		t.Logf("miss: %s", m)
	}
	if rate < fieldPassRate {
		t.Errorf("field corpus pass rate %.1f %% < %.0f %%:\n%s", 100*rate, 100*fieldPassRate, strings.Join(misses, "\n"))
	}
}

func truncateForLog(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
