// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package manifest

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestEstablished(t *testing.T) {
	crd := func(conds ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": conds}}}
	}
	tests := []struct {
		name string
		crd  *unstructured.Unstructured
		want bool
	}{
		{"no status", &unstructured.Unstructured{Object: map[string]any{}}, false},
		{"names accepted only", crd(map[string]any{"type": "NamesAccepted", "status": "True"}), false},
		{"established false", crd(map[string]any{"type": "Established", "status": "False"}), false},
		{"established", crd(map[string]any{"type": "NamesAccepted", "status": "True"}, map[string]any{"type": "Established", "status": "True"}), true},
	}
	for _, tt := range tests {
		if got := Established(tt.crd); got != tt.want {
			t.Errorf("%s: Established = %v, want %v", tt.name, got, tt.want)
		}
	}
}
