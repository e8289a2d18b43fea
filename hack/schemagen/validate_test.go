// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/root"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/fleet"
	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
	"github.com/credwatch/credwatch/pkg/report"
	"github.com/credwatch/credwatch/pkg/watch"
	"github.com/credwatch/credwatch/pkg/watch/watchtest"
)

// repo is the repository's root, from this package.
const repo = "../.."

// doc is one real document credwatch printed, or that a test pins as what it prints.
type doc struct {
	name string
	json []byte
}

// TestDocumentsValid: for every kind, documents credwatch really prints (the golden files its
// tests pin, or ones rendered here from the packages' test inputs through report.Print, the
// commands' printer) are valid against the committed schema, and against the strict schema
// that allows no property the Go types lack. A document that fails is a bug in the generator
// (or in the document), never a reason to loosen a schema by hand.
func TestDocumentsValid(t *testing.T) {
	sources := map[string]func(*testing.T) []doc{
		"TokenInspection":   golden("internal/cmd/token/testdata/golden/inspect-*.json"),
		"TokenVerification": golden("internal/cmd/token/testdata/golden/verify-*.json"),
		"KeyList":           golden("internal/cmd/keys/testdata/golden/id.json"),
		"KeyDiff":           golden("internal/cmd/keys/testdata/golden/diff-*.json"),
		"LogReport":         golden("pkg/logs/render/testdata/golden/*.json"),
		"CredentialTrace":   golden("pkg/logs/audit/testdata/golden/*.json"),
		"WatchEvent":        watchEvents,
		"CheckReport":       checkReports,
		"FleetCheckReport":  fleetReports,
		"PreflightReport":   preflightReports,
		"CloudReport":       cloudReports,
		"CatalogueEntry":    catalogueEntries,
		"Catalogue":         command("explain", "-o", "json"),
		"Version":           command("version", "-o", "json"),
	}
	for _, k := range kinds() {
		t.Run(k.name, func(t *testing.T) {
			source, ok := sources[k.name]
			if !ok {
				t.Fatalf("no documents to validate %s with: add a source", k.name)
			}
			committed, strict := compile(t, k)
			docs := source(t)
			if len(docs) == 0 {
				t.Fatal("no documents")
			}
			for _, d := range docs {
				v, err := jsonschema.UnmarshalJSON(bytes.NewReader(d.json))
				if err != nil {
					t.Errorf("%s: %v", d.name, err)
					continue
				}
				if err := committed.Validate(v); err != nil {
					t.Errorf("%s does not match docs/schemas/%s.json:\n%v", d.name, k.name, err)
				}
				if err := strict.Validate(v); err != nil {
					t.Errorf("%s does not match the strict schema (no property the Go types lack):\n%v", d.name, err)
				}
			}
			t.Logf("%d documents valid", len(docs))
		})
	}
}

// compile compiles k's committed schema and its strict variant, asserting formats (date-time).
func compile(t *testing.T, k kind) (committed, strict *jsonschema.Schema) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, schemaDir, k.name+".json"))
	if err != nil {
		t.Fatalf("%v: run make docs", err)
	}
	s, err := schemaOf(k, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	compileOne := func(name string, b []byte) *jsonschema.Schema {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource(name, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sch, err := c.Compile(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return sch
	}
	return compileOne(baseID+k.name+".json", b), compileOne(baseID+"strict/"+k.name+".json", s)
}

// golden reads the golden files that pin what a command prints.
func golden(pattern string) func(*testing.T) []doc {
	return func(t *testing.T) []doc {
		paths, err := filepath.Glob(filepath.Join(repo, pattern))
		if err != nil {
			t.Fatal(err)
		}
		var docs []doc
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, doc{strings.TrimPrefix(p, repo+"/"), b})
		}
		return docs
	}
}

// printed is v as -o json prints it.
func printed(t *testing.T, name string, v any) doc {
	t.Helper()
	var b bytes.Buffer
	if err := report.Print(&b, report.JSON, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return doc{name, b.Bytes()}
}

// command runs credwatch with args and takes its standard output.
func command(args ...string) func(*testing.T) []doc {
	return func(t *testing.T) []doc {
		var out, errOut bytes.Buffer
		cmd := root.NewCommand("credwatch", cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		cmd.SetArgs(args)
		if err := cmd.ExecuteContext(t.Context()); err != nil {
			t.Fatalf("credwatch %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		return []doc{{"credwatch " + strings.Join(args, " "), out.Bytes()}}
	}
}

// catalogueEntries: `credwatch explain ID -o json` of every entry.
func catalogueEntries(t *testing.T) []doc {
	var docs []doc
	for _, id := range catalogue.Default().IDs() {
		docs = append(docs, command("explain", id, "-o", "json")(t)...)
	}
	return docs
}

// labSnapshot reads a check snapshot hack/runbook captured on a lab, with its members' serving
// certificates put back (the runbook keeps them beside the snapshot).
func labSnapshot(t *testing.T, name string) *check.Snapshot {
	t.Helper()
	var cs struct {
		*check.Snapshot
		ServingCerts map[string]string `json:"servingCerts"`
	}
	readJSON(t, filepath.Join(repo, "hack/runbook/testdata/lab", name), &cs)
	for i := range cs.Members {
		cs.Members[i].ServingCert = cs.ServingCerts[cs.Members[i].URL]
	}
	return cs.Snapshot
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func labChecks(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(repo, "hack/runbook/testdata/lab/check-*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no lab check snapshots: %v", err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	return names
}

// checkReports: check.Run over the lab's check snapshots, and pkg/check's golden reports.
func checkReports(t *testing.T) []doc {
	docs := golden("pkg/check/testdata/*.json")(t)
	for _, name := range labChecks(t) {
		docs = append(docs, printed(t, name, check.Run(labSnapshot(t, name), check.Registry())))
	}
	return docs
}

// fleetReports: a fleet of the lab's clusters, one of which cannot be checked.
func fleetReports(t *testing.T) []doc {
	names := append(labChecks(t), "down")
	var clusters []fleet.Cluster
	for _, n := range names {
		clusters = append(clusters, fleet.Cluster{Context: n, Config: check.Config{REST: &rest.Config{Host: "https://" + n}}})
	}
	r := fleet.Check(t.Context(), clusters, fleet.Options{FailOn: catalogue.Error,
		Check: func(_ context.Context, c check.Config) (*check.Report, error) {
			name := strings.TrimPrefix(c.REST.Host, "https://")
			if name == "down" {
				return nil, errors.New("cluster not reachable: dial tcp: connection refused")
			}
			return check.Run(labSnapshot(t, name), check.Registry()), nil
		}})
	return []doc{printed(t, "fleet of "+strings.Join(names, ", "), r)}
}

// watchEvents: the lab's watch capture replayed through pkg/watch, as hack/runbook does, one
// document per JSON line.
func watchEvents(t *testing.T) []doc {
	var snaps []*check.Snapshot
	readJSON(t, filepath.Join(repo, "hack/runbook/testdata/lab/watch-key-drift.json"), &snaps)
	var out bytes.Buffer
	if err := watchtest.Replay(t.Context(), snaps, 20*time.Millisecond, watch.NewJSONLines(&out)); err != nil {
		t.Fatal(err)
	}
	var docs []doc
	for i, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if line != "" {
			docs = append(docs, doc{fmt.Sprintf("watch-key-drift.json line %d", i+1), []byte(line)})
		}
	}
	return docs
}

// preflightReports: preflight.Run over pkg/preflight's pairs and, when it is there, the shared
// reference corpus of real pairs.
func preflightReports(t *testing.T) []doc {
	dirs, _ := filepath.Glob(filepath.Join(repo, "pkg/preflight/testdata/*/current.yaml"))
	corpus, _ := filepath.Glob(filepath.Join(repo, "../shared/reference/preflight-corpus/*/current.yaml"))
	if len(corpus) == 0 {
		t.Log("no preflight corpus in ../shared/reference: the package's own pairs only")
	}
	var docs []doc
	for _, cur := range append(dirs, corpus...) {
		dir := filepath.Dir(cur)
		c, err := input.Load(t.Context(), cur)
		if err != nil {
			t.Fatal(err)
		}
		p, err := input.Load(t.Context(), filepath.Join(dir, "planned.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := preflight.Run(preflight.Config{Current: c, Planned: p})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		docs = append(docs, printed(t, dir, r))
	}
	return docs
}

// cloudReports: cloud.Judge of every test config without logins, alone and all together, and
// of configs that cannot be read.
func cloudReports(t *testing.T) []doc {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	judge := func(name string, paths ...string) doc {
		cfgs, errs := cloud.LoadPaths(paths)
		return printed(t, name, cloud.Judge(cloud.Fetch(t.Context(), cloud.FetchOptions{Configs: cfgs, ConfigErrors: errs,
			NoLogin: true, Now: now}), catalogue.Error))
	}
	dir := filepath.Join(repo, "pkg/cloud/testdata/configs")
	docs := []doc{judge("all configs", dir), judge("bad configs", filepath.Join(repo, "pkg/cloud/testdata/bad"))}
	paths, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, p := range paths {
		docs = append(docs, judge(filepath.Base(p), p))
	}
	return docs
}
