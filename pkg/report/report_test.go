// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestYAMLUnprintable: strings with characters YAML cannot carry raw still render, and read
// back to the same text.
func TestYAMLUnprintable(t *testing.T) {
	in := map[string]string{"line": "a\x7fb\u0085c\u0090d\uffffe\u2028f"}
	var b bytes.Buffer
	if err := Print(&b, YAML, in); err != nil {
		t.Fatal(err)
	}
	var back map[string]string
	if err := yaml.Unmarshal(b.Bytes(), &back); err != nil || back["line"] != in["line"] {
		t.Fatalf("read back %q (%v) from %q", back["line"], err, b.String())
	}
}

// TestPrintRedacts: whatever a result carries, the printer drops token signatures and keys.
func TestPrintRedacts(t *testing.T) {
	const sig = "c2lnbmF0dXJlLWJ5dGVzLXRoYXQtbXVzdC1nbw"
	v := map[string]string{"msg": "token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0." + sig + ". done"}
	for _, f := range []Format{Table, JSON, YAML} {
		var b bytes.Buffer
		if err := Print(&b, f, v); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), sig) {
			t.Errorf("%s: %s", f, b.String())
		}
	}
}
