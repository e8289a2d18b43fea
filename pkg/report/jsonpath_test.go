// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestJSONPath(t *testing.T) {
	doc := map[string]any{"kind": "CheckReport", "members": []any{
		map[string]any{"name": "apiserver-1", "reachable": true}, map[string]any{"name": "apiserver-2", "reachable": false}}}
	allowed := []Format{Table, JSON, JSONPath}
	for _, tt := range []struct{ tmpl, want, err string }{
		{"{.kind}", "CheckReport", ""},
		{"{.members[*].name}", "apiserver-1 apiserver-2", ""},
		{`{range .members[?(@.reachable==false)]}{.name}{"\n"}{end}`, "apiserver-2\n", ""},
		{"{.nosuch}", "", "nosuch is not found"},
		{"{.members[", "", "jsonpath"},
	} {
		f, err := ParseFormat("jsonpath="+tt.tmpl, allowed)
		if err == nil {
			var b bytes.Buffer
			err = Print(&b, f, doc)
			if err == nil && b.String() != tt.want {
				t.Errorf("%s: %q, want %q", tt.tmpl, b.String(), tt.want)
			}
		}
		if (err != nil) != (tt.err != "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: error %v, want one with %q", tt.tmpl, err, tt.err)
		}
	}
	if _, err := ParseFormat("jsonpath={.kind}", Common); err == nil {
		t.Error("jsonpath accepted by a command that does not offer it")
	}
	if _, err := ParseFormat("jsonpath", allowed); err == nil {
		t.Error("a bare jsonpath accepted")
	}
	if got := strings.Join(Names(allowed), "|"); got != "table|wide|json|jsonpath=TEMPLATE" {
		t.Errorf("names %s", got)
	}
}
