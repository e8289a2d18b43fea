// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

type memberRow struct {
	Name  string            `json:"name"`
	When  time.Time         `json:"when,omitzero"`
	Tags  []string          `json:"tags"`
	Attrs map[string]string `json:"attrs,omitempty"`
}

type memberDoc struct {
	Kind  string      `json:"kind"`
	Rows  []memberRow `json:"rows"`
	More  []memberRow `json:"more"`
	None  []memberRow `json:"none"`
	One   memberRow   `json:"one"`
	Count int         `json:"count"`
}

type splitDoc memberDoc

func (d *splitDoc) JSONMembers() []Member {
	return []Member{{Name: "kind", Value: &d.Kind}, {Name: "rows", Value: &d.Rows, Split: true},
		{Name: "more", Value: &d.More, Split: true}, {Name: "none", Value: &d.None, Split: true},
		{Name: "one", Value: &d.One}, {Name: "count", Value: &d.Count}}
}

type noMembers struct{}

func (noMembers) JSONMembers() []Member { return nil }

type badSplit struct{ N int }

func (b *badSplit) JSONMembers() []Member { return []Member{{Name: "n", Value: &b.N, Split: true}} }

// TestMembers checks renderMembers against encoding/json and indentJSON: split members that
// are nil, empty and full, nested values, strings with JSON's escapes and HTML characters.
func TestMembers(t *testing.T) {
	t.Parallel()
	row := memberRow{Name: `a "b" <c> & \d` + "\n\u2028", When: time.Date(2026, 11, 30, 8, 0, 0, 5, time.UTC), Tags: []string{}, Attrs: map[string]string{"k": "{[,:]}"}}
	for name, d := range map[string]memberDoc{"zero": {}, "full": {Kind: "Doc", Rows: []memberRow{row, {}, row}, More: []memberRow{}, One: row, Count: 3},
		"one row": {Rows: []memberRow{{Name: "x"}}}} {
		var got, want bytes.Buffer
		if err := Print(&got, JSON, (*splitDoc)(&d)); err != nil {
			t.Fatal(err)
		}
		if err := Print(&want, JSON, &d); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s:\ngot:\n%s\nwant:\n%s", name, got.String(), want.String())
		}
	}
	var b bytes.Buffer
	if err := Print(&b, JSON, noMembers{}); err != nil || b.String() != "{}\n" {
		t.Errorf("no members: %q, %v", b.String(), err)
	}
	if err := Print(&b, JSON, &badSplit{}); err == nil || !strings.Contains(err.Error(), "Split needs a pointer to a slice") {
		t.Errorf("Split of an int: %v", err)
	}
}
