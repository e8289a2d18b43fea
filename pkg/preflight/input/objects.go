// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package input

import (
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AddObjects adds objects read from a cluster, named by source (e.g. "cluster default/w1"), to
// s through the parsers files go through, so that every prediction works on both.
func (s *Set) AddObjects(source string, objs ...*unstructured.Unstructured) error {
	s.Files = append(s.Files, source)
	for _, o := range objs {
		doc, err := json.Marshal(o.Object)
		if err != nil {
			return &InputError{File: source, Err: fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)}
		}
		if err := s.addDoc(source, doc); err != nil {
			return &InputError{File: source, Err: err}
		}
	}
	return nil
}

// Served is what one running control-plane member serves, read from a live cluster.
type Served struct {
	Member string `json:"member"`
	// Issuer is the issuer of its discovery document; "" when it could not be read.
	Issuer string `json:"issuer,omitempty"`
	// Audiences are its --api-audiences as its static pod shows them; nil when not seen.
	Audiences []string `json:"audiences,omitempty"`
	// KeyIDs are the kids of its JWKS; nil when it could not be read.
	KeyIDs []string `json:"keyIds,omitempty"`
}

// Spec is s without what the members serve: the objects alone, as a roll of the same spec
// would apply them again.
func (s *Set) Spec() *Set {
	out := *s
	out.Served, out.Notes = nil, nil
	out.Absent = slices.Clone(s.Absent)
	out.Files = slices.Clone(s.Files)
	return &out
}
