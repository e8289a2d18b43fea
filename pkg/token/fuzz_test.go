package token

import (
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/kubever"
)

// FuzzDecode feeds arbitrary text to Decode (seed corpus in testdata/fuzz/FuzzDecode) and
// verifies whatever decodes, so Verify never panics on a token Decode accepts.
func FuzzDecode(f *testing.F) {
	k, err := keys.LoadPEMFile("../keys/testdata/kubernetes/rsa.pub")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tok, err := Decode(raw)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
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
