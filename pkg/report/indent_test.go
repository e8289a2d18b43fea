// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

// indentCases are json documents as json.Marshal writes them, with the corners of indenting:
// empty containers, escaped quotes and backslashes, punctuation inside strings, nesting.
var indentCases = []string{`{}`, `[]`, `""`, `0`, `-1.5e+10`, `true`, `null`, `"a\"b\\"`, `{"a":{}}`, `{"a":[]}`,
	`[[],{},[[]],{"":""}]`, `{"a":"{[,:]}","b":[1,2,{"c":null}],"d":"\\","e":"\\\""}`,
	`{"k":"\u003c\u2028é","n":[true,false,null,-0.5],"o":{"p":{"q":[{"r":"s"}]}}}`}

// TestIndentJSON checks indentJSON against json.Indent on documents and on Encode's output of
// a report-shaped value.
func TestIndentJSON(t *testing.T) {
	t.Parallel()
	type row struct {
		Name  string         `json:"name"`
		Items []int          `json:"items"`
		Empty map[string]int `json:"empty"`
		Inner *row           `json:"inner,omitempty"`
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode([]row{{Name: `a "b" <c> \d`, Items: []int{}, Empty: map[string]int{}, Inner: &row{Name: "x", Items: []int{1, 2}}}, {}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range append(indentCases, b.String()) {
		checkIndent(t, []byte(c))
		checkIndent(t, []byte(c+"\n"))
	}
}

func checkIndent(t *testing.T, src []byte) {
	t.Helper()
	var want bytes.Buffer
	if err := json.Indent(&want, src, "", "  "); err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	if got := indentJSON(nil, src); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%q: indentJSON\n%s\nwant\n%s", src, got, want.Bytes())
	}
}

// FuzzIndentJSON checks indentJSON against json.Indent on any valid JSON, compacted as
// json.Marshal writes it.
func FuzzIndentJSON(f *testing.F) {
	for _, c := range indentCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var c bytes.Buffer
		if err := json.Compact(&c, b); err != nil {
			t.Fatal(err)
		}
		checkIndent(t, c.Bytes())
		checkIndent(t, append(c.Bytes(), '\n'))
	})
}
