// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package keys_test

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"testing"

	"github.com/credwatch/credwatch/pkg/keys"
)

// Seed corpora live in testdata/fuzz/FuzzXxx and run as ordinary tests.

// FuzzParsePEM: every key ParsePEM finds is complete, and survives both ways out: written back as
// a PKIX PEM block and read again, and served as a JWKS (when kube-apiserver could serve it) and
// read again, it keeps its kid, algorithm and public material.
func FuzzParsePEM(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		ks, err := keys.ParsePEM(data, "fuzz.pem")
		if err == nil && len(ks) == 0 {
			t.Fatal("no error and no keys")
		}
		if err != nil {
			return
		}
		var out bytes.Buffer
		for _, k := range ks {
			if k.KeyID == "" || k.Algorithm == "" {
				t.Fatalf("incomplete key %+v", k)
			}
			der, err := x509.MarshalPKIXPublicKey(k.Public)
			if err != nil {
				t.Fatalf("marshal parsed key %s: %v", k.KeyID, err)
			}
			_ = pem.Encode(&out, &pem.Block{Type: "PUBLIC KEY", Bytes: der})
		}
		again, err := keys.ParsePEM(out.Bytes(), "again.pem")
		if err != nil {
			t.Fatalf("re-read the written keys: %v", err)
		}
		sameKeys(t, "PEM", ks, again)
		js, err := keys.JWKS(ks)
		if err != nil {
			return
		}
		fromJWKS, err := keys.ParseJWKS(js, "again.json")
		if err != nil {
			t.Fatalf("read the JWKS rendered from parsed keys: %v\n%s", err, js)
		}
		sameKeys(t, "JWKS", ks, fromJWKS)
	})
}

// FuzzParseJWKS: a JWKS that parses has public keys only, renders back, and the rendering is a
// fixed point: read and rendered again it is byte for byte the same, with the same keys.
func FuzzParseJWKS(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		ks, err := keys.ParseJWKS(data, "fuzz.json")
		if err != nil {
			return
		}
		for _, k := range ks {
			if k.Private != nil {
				t.Fatal("JWKS key with a private half")
			}
		}
		js, err := keys.JWKS(ks)
		if err != nil {
			t.Fatalf("re-render parsed JWKS: %v", err)
		}
		again, err := keys.ParseJWKS(js, "again.json")
		if err != nil {
			t.Fatalf("read the rendered JWKS: %v\n%s", err, js)
		}
		sameKeys(t, "JWKS", ks, again)
		js2, err := keys.JWKS(again)
		if err != nil || !bytes.Equal(js, js2) {
			t.Fatalf("rendering is not a fixed point (%v):\n%s\n%s", err, js, js2)
		}
	})
}

// sameKeys fails unless got holds want's keys in order: same kid, algorithm and public key.
func sameKeys(t *testing.T, via string, want, got []keys.Key) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s round trip: %d keys, want %d", via, len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		eq, ok := w.Public.(interface{ Equal(crypto.PublicKey) bool })
		if g.KeyID != w.KeyID || g.Algorithm != w.Algorithm || !ok || !eq.Equal(g.Public) {
			t.Fatalf("%s round trip: key #%d is %s/%s, want %s/%s (same material: %v)", via, i, g.KeyID, g.Algorithm, w.KeyID, w.Algorithm, ok && eq.Equal(g.Public))
		}
	}
}
