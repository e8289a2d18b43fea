// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package input

import (
	"reflect"
	"testing"
)

// TestArgsForms: v1beta3's map and v1beta4's list of the same flags read the same.
func TestArgsForms(t *testing.T) {
	var m, l Args
	if err := m.UnmarshalJSON([]byte(`{"service-account-issuer":"https://a","api-audiences":"x,y"}`)); err != nil {
		t.Fatal(err)
	}
	if err := l.UnmarshalJSON([]byte(`[{"name":"api-audiences","value":"x,y"},{"name":"service-account-issuer","value":"https://a"}]`)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, l) {
		t.Errorf("map %v, list %v", m, l)
	}
	if err := l.UnmarshalJSON([]byte(`7`)); err == nil {
		t.Error("a number read as extraArgs")
	}
}

// TestUnknownKindsIgnored: a kind preflight does not read is listed, never an error.
func TestUnknownKindsIgnored(t *testing.T) {
	s := &Set{}
	if err := s.Add("x.yaml", []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n---\n# only a comment\n")); err != nil {
		t.Fatal(err)
	}
	if got := s.SortedIgnored(); len(got) != 1 || got[0].String() != "Deployment web in x.yaml" {
		t.Errorf("ignored %v", got)
	}
}
