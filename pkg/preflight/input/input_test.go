// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package input

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/credwatch/credwatch/pkg/limits"
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

// TestLoadDirBound: a directory whose files add up to more than limits.Dir is one line naming
// the directory and the bound, before any file is read; each file alone is within limits.File.
func TestLoadDirBound(t *testing.T) {
	t.Parallel()
	dir := func(t *testing.T, files int, size int64) string {
		d := t.TempDir()
		for i := range files {
			f, err := os.Create(filepath.Join(d, fmt.Sprintf("%02d.yaml", i)))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(size); err != nil { // sparse: costs no disk
				t.Fatal(err)
			}
			f.Close()
		}
		return d
	}
	small := t.TempDir()
	if err := os.WriteFile(filepath.Join(small, "a.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	over := dir(t, limits.Dir/limits.File+1, limits.File)
	for _, tt := range []struct {
		name, path, wantErr string
	}{
		{"small", small, ""},
		{"over the sum", over, over + ": its .yaml, .yml and .json files add up to more than 64 MiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(t.Context(), tt.path)
			if got := fmt.Sprint(err); (tt.wantErr == "" && err != nil) || (tt.wantErr != "" && got != tt.wantErr) {
				t.Errorf("Load: %v, want %q", err, tt.wantErr)
			}
		})
	}
}
