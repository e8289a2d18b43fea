// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package report is credwatch's one printer layer: every command hands its result here and the
// chosen format (-o table|json|yaml, and sarif|junit for findings) decides how it is written.
// JSON and YAML documents carry apiVersion and kind and are a contract (docs/json.md).
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/pkg/redact"
)

// APIVersion of every document credwatch writes.
const APIVersion = "credwatch.dev/v1alpha1"

// Format is an output format.
type Format string

// Formats.
const (
	Table Format = "table"
	// Wide is the table with every column whole (kubectl's -o wide); offered wherever Table is.
	Wide  Format = "wide"
	JSON  Format = "json"
	YAML  Format = "yaml"
	SARIF Format = "sarif"
	JUnit Format = "junit"
	// JSONPath is offered by a command that lists it; the value given is "jsonpath=TEMPLATE"
	// (kubectl's -o jsonpath), and that whole value is the Format.
	JSONPath Format = "jsonpath"
)

// jsonPathPrefix starts a -o jsonpath value.
const jsonPathPrefix = string(JSONPath) + "="

// Common is the set of formats every command offers.
var Common = []Format{Table, JSON, YAML}

// ParseFormat checks s against the formats a command offers.
func ParseFormat(s string, allowed []Format) (Format, error) {
	if tmpl, ok := strings.CutPrefix(s, jsonPathPrefix); ok && slices.Contains(allowed, JSONPath) {
		if _, err := parseJSONPath(tmpl); err != nil {
			return "", fmt.Errorf("output format %q: %w", s, err)
		}
		return Format(s), nil
	}
	f := Format(strings.ToLower(s))
	if slices.Contains(allowed, f) && f != JSONPath || f == Wide && slices.Contains(allowed, Table) {
		return f, nil
	}
	return "", fmt.Errorf("output format %q: want one of %s", s, strings.Join(Names(allowed), "|"))
}

// Names are the names of the formats, wide after table where table is offered.
func Names(allowed []Format) []string {
	var names []string
	for _, a := range allowed {
		if a == JSONPath {
			names = append(names, jsonPathPrefix+"TEMPLATE")
			continue
		}
		names = append(names, string(a))
		if a == Table {
			names = append(names, string(Wide))
		}
	}
	return names
}

// Tabular is a result that can render itself for people, as o says (TableOptions).
type Tabular interface {
	WriteTable(w io.Writer, o TableOptions) error
}

// SARIFer and JUnitter are results that can render themselves for pipelines.
type (
	SARIFer  interface{ SARIF() any }
	JUnitter interface {
		WriteJUnit(w io.Writer) error
	}
)

// Print writes v in format f. Whatever a result carries, no token signature, private key or
// credential value reaches w: the rendered document passes through a redact.Writer — w itself
// when it is one (app.Main's stdout), so nothing is redacted twice.
//
// A table fits the terminal w is (TerminalWidth); into a file or a pipe every cell is whole.
func Print(w io.Writer, f Format, v any) error {
	var b bytes.Buffer
	if err := render(&b, f, v, TerminalWidth(w)); err != nil {
		return err
	}
	rw := redact.Through(w)
	if _, err := rw.Write(b.Bytes()); err != nil {
		return err
	}
	return rw.Flush()
}

func render(w *bytes.Buffer, f Format, v any, width int) error {
	if tmpl, ok := strings.CutPrefix(string(f), jsonPathPrefix); ok {
		return renderJSONPath(w, tmpl, v)
	}
	switch f {
	case JSON:
		if m, ok := v.(Membered); ok {
			return renderMembers(w, m.JSONMembers())
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := w.Write(indentJSON(make([]byte, 0, 2*b.Len()), b.Bytes())) // enc.SetIndent("", "  ")
		return err
	case YAML:
		j, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("render yaml: %w", err)
		}
		b, err := yaml.JSONToYAML(escapeUnprintable(j))
		if err != nil {
			return fmt.Errorf("render yaml: %w", err)
		}
		_, err = w.Write(b)
		return err
	case SARIF:
		s, ok := v.(SARIFer)
		if !ok {
			return fmt.Errorf("output format sarif: not available for %T", v)
		}
		return render(w, JSON, s.SARIF(), width)
	case JUnit:
		j, ok := v.(JUnitter)
		if !ok {
			return fmt.Errorf("output format junit: not available for %T", v)
		}
		return j.WriteJUnit(w)
	default:
		t, ok := v.(Tabular)
		if !ok {
			return render(w, YAML, v, width)
		}
		return writeTable(w, t, TableOptions{Wide: f == Wide, Width: width})
	}
}

// NewTabWriter returns the tabwriter every table uses; call Flush when done.
func NewTabWriter(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

// Row writes tab-separated cells and a newline.
func Row(w io.Writer, cells ...string) {
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

// escapeUnprintable writes the characters JSON leaves raw but YAML refuses or folds (DEL, C1
// controls and NEL, LS, PS, U+FFFE/U+FFFF) as \u escapes, so a hostile string in a result (a log line, a config
// value) cannot make -o yaml fail. They can only occur inside JSON strings.
func escapeUnprintable(j []byte) []byte {
	if !bytes.ContainsFunc(j, unprintableInYAML) {
		return j
	}
	var b bytes.Buffer
	for _, r := range string(j) {
		if unprintableInYAML(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.Bytes()
}

func unprintableInYAML(r rune) bool {
	return r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029 || r == 0xfffe || r == 0xffff
}

// OrDash is s, or "-" for an empty table cell.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// YesNo is a boolean table cell.
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
