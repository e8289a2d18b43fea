// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/kubever"
)

// maxDecodeError bounds a decode error: it names what is wrong, never echoes the input at length.
const maxDecodeError = 200

// FuzzDecode feeds arbitrary text to Decode (seed corpus in testdata/fuzz/FuzzDecode). Errors are
// one bounded line. A token that decodes decodes the same from its canonical form (header.payload
// as read, the signature re-encoded) with a "Bearer " prefix and white space around it, and
// Verify reaches a verdict on it without error.
func FuzzDecode(f *testing.F) {
	k, err := keys.LoadPEMFile(f.Context(), "../keys/testdata/kubernetes/rsa.pub")
	if err != nil {
		f.Fatal(err)
	}
	long := strings.Repeat("k", 300)
	b64 := base64.RawURLEncoding.EncodeToString
	f.Add(b64([]byte(`{"alg":"RS256","`+long+`":1,"`+long+`":2}`)) + ".e30.c2ln") // duplicate key
	f.Add(b64([]byte(`{"alg":"`+long+`"}`)) + ".e30.c2ln")                        // unknown alg
	f.Fuzz(func(t *testing.T, raw string) {
		tok, err := Decode(raw)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > maxDecodeError {
				t.Fatalf("decode error of %d bytes, or on several lines: %q", len(msg), msg)
			}
			return
		}
		canonical := tok.SigningInput() + "." + base64.RawURLEncoding.EncodeToString(tok.signature)
		again, err := Decode(" Bearer " + canonical + "\n")
		if err != nil {
			t.Fatalf("the canonical form of a decoded token does not decode: %v", err)
		}
		if !reflect.DeepEqual(tok, again) {
			t.Fatalf("decoded differently from its canonical form:\n%+v\n%+v", tok, again)
		}
		tok.Classify()
		tok.KubeletRefresh(time.Unix(0, 0))
		for _, line := range []kubever.Version{kubever.Old, kubever.Newest} {
			if _, err := Verify(tok, VerifyOptions{Keys: k, Issuers: []string{"https://a"}, At: time.Unix(1e9, 0), Version: line}); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	tk := getTestKeys(b)
	s := mustMint(b, podToken(tk.rsa, newIss, t0))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	tk := getTestKeys(b)
	for _, bc := range []struct {
		name string
		key  keys.Key
	}{{"RS256", tk.rsa}, {"ES256", tk.ecdsa}} {
		s := mustMint(b, podToken(bc.key, newIss, t0))
		o := VerifyOptions{Keys: []keys.Key{tk.drift, tk.ec384, tk.rsa, tk.ecdsa}, Issuers: []string{newIss}, At: t0.Add(time.Minute)}
		for _, line := range []kubever.Version{kubever.Old, kubever.Newest} {
			o.Version = line
			b.Run(bc.name+"/"+line.String(), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					tok, err := Decode(s)
					if err != nil {
						b.Fatal(err)
					}
					if d, _ := Verify(tok, o); d.Verdict != Accepted {
						b.Fatal(d.Cause)
					}
				}
			})
		}
	}
}
