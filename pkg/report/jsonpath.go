// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/client-go/util/jsonpath"
)

// parseJSONPath parses a -o jsonpath template as kubectl does ({.a.b}, [*], range ... end); a key
// the document does not have is an error, as kubectl's is.
func parseJSONPath(tmpl string) (*jsonpath.JSONPath, error) {
	jp := jsonpath.New("output")
	if err := jp.Parse(tmpl); err != nil {
		return nil, fmt.Errorf("jsonpath: %w", err)
	}
	return jp, nil
}

// renderJSONPath writes what tmpl selects of v's JSON document (the same document as -o json).
func renderJSONPath(w *bytes.Buffer, tmpl string, v any) error {
	jp, err := parseJSONPath(tmpl)
	if err != nil {
		return err
	}
	var doc bytes.Buffer
	if err := render(&doc, JSON, v, 0); err != nil {
		return err
	}
	var data any
	if err := json.Unmarshal(doc.Bytes(), &data); err != nil {
		return fmt.Errorf("jsonpath: %w", err)
	}
	if err := jp.Execute(w, data); err != nil {
		return fmt.Errorf("jsonpath %s: %w", tmpl, err)
	}
	return nil
}
