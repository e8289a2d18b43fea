// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
)

// Membered is a document that lists its top-level JSON members for Print, which then encodes
// them concurrently: a `credwatch logs` report of an incident is megabytes of JSON (a series
// per minute for every group), and encoding it on one CPU was a tenth of the command's time.
// The output is exactly what encoding the document with encoding/json and indenting it writes
// (each implementation's test compares the two).
type Membered interface {
	JSONMembers() []Member
}

// Member is a top-level member of a document: Value is encoded as encoding/json encodes it
// inside the document (pass a pointer to a struct field, as the field is addressable there).
// With Split, Value is a pointer to a slice whose elements are encoded each on its own.
type Member struct {
	Name  string
	Value any
	Split bool
}

// memberJob is one value to encode, indented at depth.
type memberJob struct {
	v     any
	depth int
	out   []byte
	err   error
}

// renderMembers writes the members as an indented JSON object, the values encoded by as many
// goroutines as there are CPUs.
func renderMembers(w *bytes.Buffer, members []Member) error {
	var jobs []*memberJob
	split := make([][]*memberJob, len(members)) // the elements of a Split member; nil for a null slice
	whole := make([]*memberJob, len(members))
	for i, m := range members {
		if !m.Split {
			whole[i] = &memberJob{v: m.Value, depth: 1}
			jobs = append(jobs, whole[i])
			continue
		}
		s := reflect.ValueOf(m.Value)
		if s.Kind() != reflect.Pointer || s.Elem().Kind() != reflect.Slice {
			return fmt.Errorf("render json: member %q: Split needs a pointer to a slice, not %T", m.Name, m.Value)
		}
		if s = s.Elem(); s.IsNil() {
			whole[i] = &memberJob{v: nil, depth: 1}
			jobs = append(jobs, whole[i])
			continue
		}
		split[i] = make([]*memberJob, s.Len())
		for k := range s.Len() {
			split[i][k] = &memberJob{v: s.Index(k).Addr().Interface(), depth: 2}
			jobs = append(jobs, split[i][k])
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			for i := int(next.Add(1)) - 1; i < len(jobs); i = int(next.Add(1)) - 1 {
				j := jobs[i]
				b.Reset()
				if j.err = enc.Encode(j.v); j.err == nil {
					compact := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
					j.out = indentAt(make([]byte, 0, 2*len(compact)), compact, j.depth)
				}
			}
		})
	}
	wg.Wait()
	size := 16
	for _, j := range jobs {
		if j.err != nil {
			return j.err
		}
		size += len(j.out) + 8
	}
	w.Grow(size)
	if len(members) == 0 {
		w.WriteString("{}\n")
		return nil
	}
	w.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString("\n  ")
		name, err := json.Marshal(m.Name)
		if err != nil {
			return err
		}
		w.Write(name)
		w.WriteString(": ")
		switch elems := split[i]; {
		case whole[i] != nil:
			w.Write(whole[i].out)
		case len(elems) == 0:
			w.WriteString("[]")
		default:
			w.WriteByte('[')
			for k, e := range elems {
				if k > 0 {
					w.WriteByte(',')
				}
				w.WriteString("\n    ")
				w.Write(e.out)
			}
			w.WriteString("\n  ]")
		}
	}
	w.WriteString("\n}\n")
	return nil
}
