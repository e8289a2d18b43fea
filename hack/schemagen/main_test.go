// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSchemasCurrent: docs/schemas is what the Go types generate. After changing a document's
// type (or its doc comments), run `make docs` (cd hack/schemagen && go run . ../..).
func TestSchemasCurrent(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(filepath.Join("..", ".."))
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	have, _ := filepath.Glob(filepath.Join(schemaDir, "*.json"))
	if len(want) != len(kinds()) {
		t.Fatalf("generated %d schemas for %d kinds", len(want), len(kinds()))
	}
	if len(want) != len(have) {
		t.Errorf("%s has %d schemas, the kinds make %d: run make docs", schemaDir, len(have), len(want))
	}
	for _, f := range want {
		got, err := os.ReadFile(filepath.Join(schemaDir, filepath.Base(f)))
		if err != nil {
			t.Errorf("%s: %v: run make docs", filepath.Base(f), err)
			continue
		}
		gen, _ := os.ReadFile(f)
		if string(got) != string(gen) {
			t.Errorf("%s/%s is stale: run make docs", schemaDir, filepath.Base(f))
		}
	}
}

// TestJSONFields: the members encoding/json writes, by its rules for tags, embedding and
// dominance, which the schemas' required and nullable properties follow.
func TestJSONFields(t *testing.T) {
	type Inner struct {
		Kind  string `json:"kind"`
		Title string `json:"title"`
		Gone  string `json:"-"`
	}
	type Ptr struct {
		Extra string `json:"extra"`
	}
	type outer struct {
		Kind string `json:"kind"`
		Inner
		*Ptr
		List   []string          `json:"list"`
		Opt    []string          `json:"opt,omitempty"`
		Map    map[string]string `json:"map"`
		Zero   *Ptr              `json:"zero,omitzero"`
		hidden string
	}
	var got []jsonField
	for _, f := range jsonFields(reflect.TypeFor[outer]()) {
		got = append(got, jsonField{name: f.name, omit: f.omit, viaPointer: f.viaPointer})
	}
	want := []jsonField{{name: "kind"}, {name: "title"}, {name: "extra", viaPointer: true}, {name: "list"},
		{name: "opt", omit: true}, {name: "map"}, {name: "zero", omit: true}}
	if !slices.Equal(got, want) {
		t.Errorf("fields\n got %+v\nwant %+v", got, want)
	}
	var nullable []string
	for _, f := range jsonFields(reflect.TypeFor[outer]()) {
		if f.nullable() {
			nullable = append(nullable, f.name)
		}
	}
	if !slices.Equal(nullable, []string{"list", "map"}) {
		t.Errorf("nullable %v, want list and map (nil is null; omitted when omitempty)", nullable)
	}
	_ = outer{}.hidden
}

// TestJSONDocLinks: docs/json.md links the schema of every kind.
func TestJSONDocLinks(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "json.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds() {
		if link := "(schemas/" + k.name + ".json)"; !strings.Contains(string(b), link) {
			t.Errorf("docs/json.md does not link %s", link)
		}
	}
}
