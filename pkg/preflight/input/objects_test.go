// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package input

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestObjectsReadAsFiles: every testdata file, given as unstructured objects (as a live read
// gets them), makes the Set its file makes.
func TestObjectsReadAsFiles(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.yaml")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, f := range files {
		if filepath.Base(filepath.Dir(f)) == "bad" {
			continue
		}
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want := &Set{}
			if err := want.Add(f, data); err != nil {
				t.Fatal(err)
			}
			var objs []*unstructured.Unstructured
			for _, doc := range Documents(data) {
				u := &unstructured.Unstructured{}
				if err := yaml.Unmarshal(doc, &u.Object); err != nil {
					t.Fatal(err)
				}
				objs = append(objs, u)
			}
			got := &Set{}
			if err := got.AddObjects(f, objs...); err != nil {
				t.Fatal(err)
			}
			clearLines(reflect.ValueOf(want).Elem()) // a cluster's objects have no line
			if !reflect.DeepEqual(got, want) {
				t.Errorf("from objects:\n%+v\nfrom the file:\n%+v", got, want)
			}
		})
	}
}

// TestObjectsBadInput: an object the parsers refuse is one error naming the source and object.
func TestObjectsBadInput(t *testing.T) {
	kcp := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
		"kind": "KubeadmControlPlane", "metadata": map[string]any{"name": "w1-control-plane"}, "spec": map[string]any{}}}
	err := (&Set{}).AddObjects("cluster default/w1", kcp)
	if want := "cluster default/w1: KubeadmControlPlane w1-control-plane: no spec.kubeadmConfigSpec"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// clearLines sets every Object's Line under v to 0.
func clearLines(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[Object]() {
			v.FieldByName("Line").SetInt(0)
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				clearLines(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			clearLines(v.Index(i))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			clearLines(v.Elem())
		}
	}
}
