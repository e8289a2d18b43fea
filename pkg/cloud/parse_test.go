// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// parsed is what a golden file holds: the config, plus each credential's password (in tests only).
type parsed struct {
	Config    *Config  `json:"config"`
	Passwords []string `json:"passwords"`
}

func TestParseGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/configs/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test configs: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := Parse(data, Source{Kind: SourceFile, Path: filepath.Base(f)})
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			p := parsed{Config: cfg, Passwords: []string{}}
			for _, c := range cfg.Credentials {
				p.Passwords = append(p.Passwords, c.Password())
			}
			got, _ := json.MarshalIndent(p, "", "  ")
			golden := filepath.Join("testdata", "golden", filepath.Base(f)+".json")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
				t.Errorf("%s differs from %s:\n%s", f, golden, got)
			}
		})
	}
}

func TestParseBadInput(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "  \n", "empty file"},
		{"unclosed section", "[Global\nuser = x\n", "line 1: expected subsection name or right bracket"},
		{"key outside section", "user = x\n[Global]\n", "line 1, key user: expected section header"},
		{"unknown ini", "[Foo]\nbar = 1\n", "not a vSphere or OpenStack"},
		{"unknown yaml", "kind: Pod\n", "not a vSphere or OpenStack"},
		{"vc without name", "[VirtualCenter]\nuser = x\n", "needs a server name"},
		{"bad yaml types", "global:\n  user: [a, b]\n", "vSphere YAML"},
		{"clouds not a map", "clouds: [1, 2]\n", "clouds.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in), Source{Kind: SourceFile, Path: "x.conf"})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "x.conf") {
				t.Fatalf("err = %v, want one naming x.conf and containing %q", err, tc.want)
			}
		})
	}
}

func TestPasswordNeverSerialised(t *testing.T) {
	c := Credential{Provider: VSphere, Server: "vc", Username: "u"}.WithPassword("hunter2-secret")
	b, err := json.Marshal(Item{Credential: c})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("hunter2")) {
		t.Fatalf("password in JSON: %s", b)
	}
	if !bytes.Contains(b, []byte(`"passwordSet":true`)) {
		t.Fatalf("passwordSet missing: %s", b)
	}
}

func TestVSphereFromSecret(t *testing.T) {
	data := map[string][]byte{
		"vc1.example.com.username": []byte("a@vsphere.local"),
		"vc1.example.com.password": []byte("pa\n"),
		"server_0":                 []byte("fd00::1"),
		"username_0":               []byte("b@vsphere.local"),
		"password_0":               []byte("pb"),
	}
	ref := &SecretRef{Servers: []string{"vc1.example.com", "vc9.example.com"}, Insecure: true}
	creds, notes := VSphereFromSecret(data, Source{Kind: SourceSecret, Namespace: "kube-system", Name: "s"}, ref, nil)
	if len(creds) != 2 || creds[0].Server != "fd00::1" || creds[1].Password() != "pa" || !creds[1].Insecure {
		t.Fatalf("creds = %+v", creds)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "vc9.example.com") {
		t.Fatalf("notes = %v, want one about vc9", notes)
	}
}

func TestKeystoneV3URL(t *testing.T) {
	for in, want := range map[string]string{
		"https://k:5000":          "https://k:5000/v3/",
		"https://k:5000/v3":       "https://k:5000/v3/",
		"https://k:5000/v3/":      "https://k:5000/v3/",
		"https://k/identity/v2.0": "https://k/identity/v3/",
	} {
		got, err := KeystoneV3URL(in)
		if err != nil || got != want {
			t.Errorf("KeystoneV3URL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := KeystoneV3URL("keystone:5000"); err == nil {
		t.Error("want an error for a URL without scheme")
	}
}

func BenchmarkParse(b *testing.B) {
	files, _ := filepath.Glob("testdata/configs/*")
	var data [][]byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, d)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range data {
			if _, err := Parse(d, Source{Kind: SourceFile, Path: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func TestVSphereURL(t *testing.T) {
	for _, tc := range []struct{ server, port, want string }{
		{"vc.example.com", "", "https://vc.example.com/sdk"},
		{"vc.example.com", "443", "https://vc.example.com/sdk"},
		{"10.0.0.1", "8443", "https://10.0.0.1:8443/sdk"},
		{"fd00::1", "", "https://[fd00::1]/sdk"},
		{"fd00::1", "8443", "https://[fd00::1]:8443/sdk"},
		{"https://127.0.0.1:4443/sdk", "", "https://127.0.0.1:4443/sdk"},
	} {
		u, err := VSphereURL(Credential{Server: tc.server, Port: tc.port})
		if err != nil || u.String() != tc.want {
			t.Errorf("VSphereURL(%q, %q) = %v, %v; want %s", tc.server, tc.port, u, err, tc.want)
		}
	}
}
