package keys_test

import (
	"testing"

	"github.com/credwatch/credwatch/pkg/keys"
)

// Seed corpora live in testdata/fuzz/FuzzXxx and run as ordinary tests.

func FuzzParsePEM(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		ks, err := keys.ParsePEM(data, "fuzz.pem")
		if err == nil && len(ks) == 0 {
			t.Fatal("no error and no keys")
		}
		for _, k := range ks {
			if k.KeyID == "" || k.Algorithm == "" {
				t.Fatalf("incomplete key %+v", k)
			}
		}
	})
}

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
		if _, err := keys.JWKS(ks); err != nil {
			t.Fatalf("re-render parsed JWKS: %v", err)
		}
	})
}
