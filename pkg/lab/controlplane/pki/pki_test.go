// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package pki

import (
	"path/filepath"
	"testing"
)

func TestKeyIDIsStable(t *testing.T) {
	dir := t.TempDir()
	key, pub := filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	if err := NewSAKey(key, pub); err != nil {
		t.Fatal(err)
	}
	a, err := KeyIDFromPublicKeyFile(pub)
	if err != nil {
		t.Fatal(err)
	}
	pub2 := filepath.Join(dir, "again.pub")
	if err := PublicFromPrivate(key, pub2); err != nil {
		t.Fatal(err)
	}
	b, err := KeyIDFromPublicKeyFile(pub2)
	if err != nil {
		t.Fatal(err)
	}
	if a != b || len(a) != 43 {
		t.Errorf("kid %q vs %q (want 43 chars, equal)", a, b)
	}
}
