// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/redact/redacttest"
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

// secretTemplates are configs of each format with the password's spelling at %s.
var secretTemplates = []string{
	"[Global]\nuser = \"u@vsphere.local\"\npassword = %s\n[VirtualCenter \"vc.example.com\"]\ndatacenters = dc\n",
	"[Global]\nauth-url = https://k:5000/v3\nusername = u\npassword = %s\ntenant-name = p\n",
	"global:\n  user: u\n  password: %s\nvcenter:\n  vc1:\n    server: vc.example.com\n",
	"clouds:\n  c:\n    auth:\n      auth_url: https://k/v3\n      username: u\n      password: %s\n",
}

// FuzzConfigNoSecret plants a password (marker runes and the characters every escaping
// rewrites, 1 to 8 of them) in a config of each format, spelt raw, quoted or escaped, then
// breaks the config around it; the password is in no parse error and in no output format of
// `credwatch cloud` (table, JSON, YAML, SARIF, JUnit).
func FuzzConfigNoSecret(f *testing.F) {
	f.Add(uint8(0), []byte("S3cr3t"), uint8(0), uint8(1), "", uint16(0))
	f.Add(uint8(2), []byte{1}, uint8(1), uint8(2), "[", uint16(30))
	f.Add(uint8(3), []byte{7, 7}, uint8(2), uint8(3), "\"", uint16(9))
	f.Add(uint8(1), []byte("x"), uint8(3), uint8(4), " #", uint16(3))
	f.Fuzz(func(t *testing.T, format uint8, seed []byte, spell, mutation uint8, junk string, pos uint16) {
		pw := redacttest.Password(seed)
		var v string
		switch spell % 4 {
		case 0:
			v = pw
		case 1:
			v = strconv.Quote(pw)
		case 2:
			v = "'" + strings.ReplaceAll(pw, "'", "''") + "'"
		default:
			v = redacttest.Encode(pw, spell/4)
		}
		data := fmt.Sprintf(secretTemplates[int(format)%len(secretTemplates)], v)
		junk = redacttest.Scrub(strings.ReplaceAll(junk, "\n", " "))
		data = mutate(data, mutation, junk, int(pos))
		cfg, err := Parse([]byte(data), Source{Kind: SourceFile, Path: "fuzz.conf"})
		o := FetchOptions{NoLogin: true}
		out := ""
		if err != nil {
			out, o.ConfigErrors = err.Error(), []error{err}
		} else {
			for _, c := range cfg.Credentials {
				if strings.ContainsAny(c.Account()+c.ProjectName+c.ProjectID+c.Region+c.CAFile, redacttest.MarkerRunes) {
					return // the mutation made the planted text a user or server name: no longer a secret
				}
			}
			o.Configs = []*Config{cfg}
		}
		out += printAll(t, Judge(Fetch(context.Background(), o), ""))
		if leak := redacttest.PasswordLeak(out); leak != "" {
			t.Fatalf("password %q (%s) of\n%s\nis in the output:\n%s", pw, leak, data, out)
		}
	})
}

// mutate breaks the password's line (the third) of a template: drops its separator, cuts a
// quote, indents it, or inserts junk anywhere.
func mutate(data string, mutation uint8, junk string, pos int) string {
	lines := strings.Split(data, "\n")
	pl := 2
	for i, l := range lines {
		if strings.Contains(l, "password") {
			pl = i
		}
	}
	switch mutation % 6 {
	case 1: // the line: no separator
		lines[pl] = strings.Replace(strings.Replace(lines[pl], " = ", " ", 1), ": ", " ", 1)
	case 2:
		lines[pl] = strings.Replace(lines[pl], `"`, "", 1)
	case 3:
		lines[pl] = " " + lines[pl]
	case 4:
		lines[pl] += junk
	case 5:
		s := strings.Join(lines, "\n")
		p := pos % (len(s) + 1)
		return s[:p] + junk + s[p:]
	}
	return strings.Join(lines, "\n")
}
