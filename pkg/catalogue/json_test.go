// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package catalogue

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

//go:embed catalogue.yaml
var catalogueYAML []byte

var update = flag.Bool("update", false, "rewrite catalogue.json from catalogue.yaml")

// TestEmbeddedJSON checks that catalogue.json, which the program reads, is catalogue.yaml, which
// people edit; -update rewrites it.
func TestEmbeddedJSON(t *testing.T) {
	j, err := yaml.YAMLToJSONStrict(catalogueYAML)
	if err != nil {
		t.Fatalf("catalogue.yaml: %v", err)
	}
	var want bytes.Buffer
	if err := json.Indent(&want, j, "", "  "); err != nil {
		t.Fatal(err)
	}
	want.WriteByte('\n')
	if *update {
		if err := os.WriteFile("catalogue.json", want.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(catalogueJSON, want.Bytes()) {
		t.Fatal("catalogue.json is not catalogue.yaml: run go test ./pkg/catalogue -run TestEmbeddedJSON -args -update")
	}
	fromYAML, err := Parse(catalogueYAML)
	if err != nil {
		t.Fatalf("catalogue.yaml: %v", err)
	}
	fromJSON, err := parseJSON(catalogueJSON)
	if err != nil {
		t.Fatalf("catalogue.json: %v", err)
	}
	if !reflect.DeepEqual(fromYAML, fromJSON) {
		t.Error("catalogue.json decodes to another catalogue than catalogue.yaml")
	}
}

func BenchmarkDefault(b *testing.B) {
	for b.Loop() {
		if _, err := parseJSON(catalogueJSON); err != nil {
			b.Fatal(err)
		}
	}
}
