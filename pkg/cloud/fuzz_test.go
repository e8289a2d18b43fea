package cloud

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParse feeds any bytes to the config parser: it must not panic, and a parsed config's JSON
// must not depend on the passwords it found (they are never serialised).
func FuzzParse(f *testing.F) {
	f.Add([]byte("[Global]\nuser = u\npassword = \"p;#\"\n[VirtualCenter \"vc\"]\n"))
	f.Add([]byte("global:\n  user: u\nvcenter:\n  a:\n    server: s\n"))
	f.Add([]byte("clouds:\n  c:\n    auth:\n      auth_url: https://k/v3\n      password: pw\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, Source{Kind: SourceFile, Path: "fuzz"})
		if err != nil {
			return
		}
		b, err := json.Marshal(cfg)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		other := *cfg
		other.Credentials = nil
		for _, c := range cfg.Credentials {
			if c.PasswordSet {
				c = c.WithPassword("something else")
			}
			other.Credentials = append(other.Credentials, c)
		}
		b2, _ := json.Marshal(&other)
		if !bytes.Equal(b, b2) {
			t.Fatalf("the JSON depends on the password:\n%s\n%s", b, b2)
		}
	})
}

// FuzzVSphereFromSecret feeds any key and value to the Secret reader.
func FuzzVSphereFromSecret(f *testing.F) {
	f.Add("vc.example.com.username", "u", "vc.example.com.password", "p")
	f.Add("server_0", "fd00::1", "password_0", "p")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		creds, _ := VSphereFromSecret(map[string][]byte{k1: []byte(v1), k2: []byte(v2)},
			Source{Kind: SourceSecret, Namespace: "ns", Name: "n"}, &SecretRef{Servers: []string{"vc"}}, nil)
		for _, c := range creds {
			if c.Provider != VSphere {
				t.Fatalf("provider %q", c.Provider)
			}
		}
	})
}

// FuzzKeystoneV3URL: any auth-url either errors or yields an absolute http(s) URL ending in /v3/.
func FuzzKeystoneV3URL(f *testing.F) {
	f.Add("https://keystone:5000")
	f.Add("http://127.0.0.1:5000/v2.0/")
	f.Fuzz(func(t *testing.T, in string) {
		u, err := KeystoneV3URL(in)
		if err != nil {
			return
		}
		if !bytes.HasSuffix([]byte(u), []byte("/v3/")) {
			t.Fatalf("KeystoneV3URL(%q) = %q", in, u)
		}
	})
}
