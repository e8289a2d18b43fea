// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token

import (
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/keys"
)

// Shared test material: kube-apiserver's own test keys (see ../keys/testdata/kubernetes) and a
// second, "drifted" RSA key and a P-384 key.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

type testKeys struct {
	rsa, ecdsa, drift, ec384 keys.Key
}

func loadKey(t testing.TB, path string) keys.Key {
	t.Helper()
	ks, err := keys.LoadPEMFile(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	return ks[0]
}

func getTestKeys(t testing.TB) testKeys {
	return testKeys{
		rsa:   loadKey(t, "../keys/testdata/kubernetes/rsa.key"),
		ecdsa: loadKey(t, "../keys/testdata/kubernetes/ecdsa.key"),
		drift: loadKey(t, "../keys/testdata/gen/rsa-drift.key"),
		ec384: loadKey(t, "../keys/testdata/gen/ec384.key"),
	}
}

func mustMint(t testing.TB, o MintOptions) string {
	t.Helper()
	s, err := Mint(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func podToken(k keys.Key, iss string, iat time.Time) MintOptions {
	return MintOptions{
		Key: k, Issuer: iss, IssuedAt: iat, ExpirationSeconds: 3600,
		Namespace: "default", ServiceAccount: Ref{Name: "app", UID: "sa-uid-1"},
		Pod:  &Ref{Name: "web-0", UID: "pod-uid-1"},
		Node: &Ref{Name: "node-a", UID: "node-uid-1"},
		JTI:  "6d7f8a90-0000-4000-8000-000000000001",
	}
}
