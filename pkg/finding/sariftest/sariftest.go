// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package sariftest validates SARIF logs against the OASIS SARIF 2.1.0 schema (errata 01), kept
// beside the project in shared/reference/schemas, for the tests of every command that writes one.
package sariftest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	once   sync.Once
	schema *jsonschema.Schema
	err    error
)

// schemaPath is the schema's file: shared/ beside the clone.
func schemaPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "reference", "schemas", "sarif-2.1.0.json")
}

// Schema is the compiled SARIF 2.1.0 schema; it fails t when the schema cannot be read.
func Schema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	once.Do(func() { schema, err = compile(schemaPath()) })
	if err != nil {
		t.Fatalf("the SARIF schema: %v (the test reads it from shared/reference/schemas beside the clone)", err)
	}
	return schema
}

func compile(path string) (*jsonschema.Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(path, doc); err != nil {
		return nil, err
	}
	return c.Compile(path)
}

// Decode is what a consumer of the log reads: v as credwatch prints it (JSON), decoded.
func Decode(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return DecodeBytes(t, b)
}

// DecodeBytes decodes a SARIF log as printed.
func DecodeBytes(t testing.TB, b []byte) any {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// Validate fails t unless doc (from Decode) is a valid SARIF 2.1.0 log.
func Validate(t testing.TB, doc any) {
	t.Helper()
	if err := Schema(t).Validate(doc); err != nil {
		t.Fatalf("not valid SARIF 2.1.0: %v", err)
	}
}

// Results are the results of a decoded log's first run.
func Results(doc any) []any {
	res, _ := doc.(map[string]any)["runs"].([]any)[0].(map[string]any)["results"].([]any)
	return res
}
