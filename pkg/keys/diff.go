// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package keys

import (
	"bytes"
	"crypto/x509"
)

// Diff compares two key sets by kid and by key material.
type Diff struct {
	Both      []Key     // same kid, same material
	OnlyLeft  []Key     // kid and material only on the left
	OnlyRight []Key     // kid and material only on the right
	Conflicts []KeyPair // same kid, different material (a forged or mislabelled kid)
	Relabeled []KeyPair // same material under different kids (a JWKS with its own kids)
}

// KeyPair is a left and a right key that correspond.
type KeyPair struct {
	Left, Right Key
}

// Equal reports whether the two sets hold the same keys.
func (d Diff) Equal() bool {
	return len(d.OnlyLeft) == 0 && len(d.OnlyRight) == 0 && len(d.Conflicts) == 0 && len(d.Relabeled) == 0
}

// Compare diffs left against right. Order follows the inputs; duplicates within a side count once.
func Compare(left, right []Key) Diff {
	var d Diff
	left, right = dedupe(left), dedupe(right)
	usedRight := make([]bool, len(right))
	for _, l := range left {
		matched := false
		for j, r := range right {
			if usedRight[j] || r.KeyID != l.KeyID {
				continue
			}
			usedRight[j], matched = true, true
			if sameMaterial(l, r) {
				d.Both = append(d.Both, l)
			} else {
				d.Conflicts = append(d.Conflicts, KeyPair{l, r})
			}
			break
		}
		if matched {
			continue
		}
		for j, r := range right {
			if !usedRight[j] && sameMaterial(l, r) {
				usedRight[j], matched = true, true
				d.Relabeled = append(d.Relabeled, KeyPair{l, r})
				break
			}
		}
		if !matched {
			d.OnlyLeft = append(d.OnlyLeft, l)
		}
	}
	for j, r := range right {
		if !usedRight[j] {
			d.OnlyRight = append(d.OnlyRight, r)
		}
	}
	return d
}

func dedupe(ks []Key) []Key {
	var out []Key
	for _, k := range ks {
		dup := false
		for _, o := range out {
			if o.KeyID == k.KeyID && sameMaterial(o, k) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, k)
		}
	}
	return out
}

func sameMaterial(a, b Key) bool {
	da, err1 := x509.MarshalPKIXPublicKey(a.Public)
	db, err2 := x509.MarshalPKIXPublicKey(b.Public)
	return err1 == nil && err2 == nil && bytes.Equal(da, db)
}
