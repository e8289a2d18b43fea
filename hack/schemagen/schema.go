// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"cmp"
	"encoding"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/report"
)

// baseID is where the schemas' $ids live: one per kind, BASE/KIND.json.
const baseID = "https://credwatch.dev/schemas/v1alpha1/"

// schemaOf is k's JSON Schema (draft 2020-12), indented, with a trailing newline. comments are
// the Go doc comments of the types and fields (jsonschema.Reflector.CommentMap), which become
// descriptions. The committed schemas are open (a consumer must ignore fields it does not know,
// and fields are added within a version); strict forbids properties the Go types do not have,
// which the tests use to catch a document the types do not describe.
func schemaOf(k kind, comments map[string]string, strict bool) ([]byte, error) {
	g := &graph{types: map[string]reflect.Type{}}
	r := &jsonschema.Reflector{
		Anonymous:                 true,
		ExpandedStruct:            true,
		AllowAdditionalProperties: !strict,
		Namer:                     g.name,
		Mapper:                    g.mapped,
		CommentMap:                comments,
	}
	s := r.Reflect(k.value)
	if g.err != nil {
		return nil, fmt.Errorf("%s: %w", k.name, g.err)
	}
	if err := g.fix(s, reflect.TypeOf(k.value)); err != nil {
		return nil, fmt.Errorf("%s: %w", k.name, err)
	}
	for name, def := range s.Definitions {
		if t, ok := g.types[name]; ok && t.Kind() == reflect.Struct && def.Properties != nil {
			if err := g.fix(def, t); err != nil {
				return nil, fmt.Errorf("%s: %w", k.name, err)
			}
		}
	}
	s.ID = jsonschema.ID(baseID + k.name + ".json")
	s.Title = k.name
	if k.line {
		s.Description = "One line of `" + k.command + " -o json`, which writes JSON Lines (docs/json.md)."
	} else {
		s.Description = "The document `" + k.command + " -o json` prints (docs/json.md)."
		for p, v := range map[string]string{"apiVersion": report.APIVersion, "kind": k.name} {
			prop, ok := s.Properties.Get(p)
			if !ok {
				return nil, fmt.Errorf("%s: no %s field", k.name, p)
			}
			prop.Const = v
		}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// graph follows the reflector through a kind's types: the Go type of every definition, and the
// first type it could not describe.
type graph struct {
	types map[string]reflect.Type // definition name → type
	err   error
}

// name names a definition after its package and type (check.Report, cloud.Report): names alone
// collide, and the reflector would silently give two types one definition.
func (g *graph) name(t reflect.Type) string {
	if t.Name() == "" {
		return ""
	}
	name := path.Base(t.PkgPath()) + "." + t.Name()
	if strings.ContainsAny(name, "[]/") { // an instance of a generic type
		name = strings.NewReplacer("[", "_", "]", "_", "/", "_").Replace(name)
	}
	if other, ok := g.types[name]; ok && other != t {
		g.fail(fmt.Errorf("definition %s is both %s and %s", name, other.PkgPath(), t.PkgPath()))
	}
	g.types[name] = t
	return name
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// mapped describes the types that write themselves (MarshalJSON, MarshalText) by what they
// write; nil leaves a type to the reflector. A type with its own encoding that is not described
// here is an error: its fields say nothing of what it prints.
func (g *graph) mapped(t reflect.Type) *jsonschema.Schema {
	switch t {
	case reflect.TypeFor[time.Time](), reflect.TypeFor[logs.Minute](): // RFC 3339
		return &jsonschema.Schema{Type: "string", Format: "date-time"}
	case reflect.TypeFor[json.RawMessage]():
		return &jsonschema.Schema{} // any JSON value
	}
	p := reflect.PointerTo(t)
	if p.Implements(marshalerType) || p.Implements(textMarshalerType) {
		g.fail(fmt.Errorf("%s has its own JSON encoding: describe what it prints in schemagen's graph.mapped", t))
	}
	return nil
}

func (g *graph) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

// fix makes s, the schema of struct t, say what encoding/json writes where the reflector does
// not: a nil slice, map or pointer without omitempty or omitzero is written as null; a field
// promoted from an embedded pointer is absent when the pointer is nil; a field promoted from an
// embedded struct loses to one of the same name nearer the top. The property names must be
// the encoded ones, neither more nor fewer.
func (g *graph) fix(s *jsonschema.Schema, t reflect.Type) error {
	fields := jsonFields(t)
	var required []string
	for _, f := range fields {
		p, ok := s.Properties.Get(f.name)
		if !ok {
			return fmt.Errorf("%s: field %s has no property", t, f.name)
		}
		if f.nullable() {
			s.Properties.Set(f.name, &jsonschema.Schema{Description: p.Description,
				AnyOf: []*jsonschema.Schema{withoutDescription(p), {Type: "null"}}})
		}
		if !f.omit && !f.viaPointer {
			required = append(required, f.name)
		}
	}
	if s.Properties.Len() != len(fields) {
		var names []string
		for p := s.Properties.Oldest(); p != nil; p = p.Next() {
			if !slices.ContainsFunc(fields, func(f jsonField) bool { return f.name == p.Key }) {
				names = append(names, p.Key)
			}
		}
		return fmt.Errorf("%s: properties %v are not encoded fields", t, names)
	}
	s.Required = required
	return nil
}

func withoutDescription(s *jsonschema.Schema) *jsonschema.Schema {
	c := *s
	c.Description = ""
	return &c
}

// jsonField is a member encoding/json writes for a struct.
type jsonField struct {
	name       string
	typ        reflect.Type
	omit       bool // omitempty or omitzero
	tagged     bool // named by its tag
	depth      int  // how deep in embedded structs
	viaPointer bool // promoted through an embedded pointer
}

func (f jsonField) nullable() bool {
	switch f.typ.Kind() {
	case reflect.Slice, reflect.Map, reflect.Pointer:
		return !f.omit
	}
	return false
}

// jsonFields are the members encoding/json writes for struct t, in order, by its rules for
// tags, unexported fields and embedding (typeFields in encoding/json/encode.go).
func jsonFields(t reflect.Type) []jsonField {
	var all []jsonField
	var walk func(t reflect.Type, depth int, viaPointer bool)
	walk = func(t reflect.Type, depth int, viaPointer bool) {
		for f := range t.Fields() {
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous {
				ft, ptr := f.Type, false
				if ft.Kind() == reflect.Pointer {
					ft, ptr = ft.Elem(), true
				}
				if !f.IsExported() && ft.Kind() != reflect.Struct {
					continue
				}
				if name == "" && ft.Kind() == reflect.Struct {
					walk(ft, depth+1, viaPointer || ptr)
					continue
				}
			} else if !f.IsExported() {
				continue
			}
			omit := false
			for o := range strings.SplitSeq(opts, ",") {
				omit = omit || o == "omitempty" || o == "omitzero"
			}
			all = append(all, jsonField{name: cmp.Or(name, f.Name), typ: f.Type, omit: omit, tagged: name != "",
				depth: depth, viaPointer: viaPointer})
		}
	}
	walk(t, 0, false)
	// Dominance: of the fields with one name, the shallowest wins; at equal depth the one named by
	// its tag wins, and without exactly one such, none is written.
	var out []jsonField
	for i, f := range all {
		if slices.ContainsFunc(all[:i], func(o jsonField) bool { return o.name == f.name }) {
			continue // decided at its first occurrence
		}
		var same []jsonField
		for _, o := range all {
			if o.name == f.name {
				same = append(same, o)
			}
		}
		top := slices.MinFunc(same, func(a, b jsonField) int { return a.depth - b.depth })
		same = slices.DeleteFunc(same, func(o jsonField) bool { return o.depth > top.depth })
		if len(same) > 1 {
			tagged := slices.DeleteFunc(slices.Clone(same), func(o jsonField) bool { return !o.tagged })
			if len(tagged) != 1 {
				continue
			}
			same = tagged
		}
		out = append(out, same[0])
	}
	return out
}
