// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// TestSASecretAsStored: the <cluster>-sa Secret is read as the API server stores it
// (stringData over data), and a Secret without a readable key is never "no-change".
func TestSASecretAsStored(t *testing.T) {
	const dir = "testdata/kcp-rollout-after/"
	dataLine := regexp.MustCompile(`(?m)^data:\n  tls\.crt: (\S+)\n`)
	read := func(name string) (string, string) {
		b, err := os.ReadFile(dir + name)
		if err != nil {
			t.Fatal(err)
		}
		m := dataLine.FindStringSubmatch(string(b))
		if m == nil {
			t.Fatalf("%s: no data.tls.crt", name)
		}
		return string(b), m[0]
	}
	cur, curData := read("current.yaml")
	pl, plData := read("planned.yaml")
	pemOf := func(b64 string) string {
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	stringData := func(p string) string {
		return "stringData:\n  tls.crt: |\n    " + strings.ReplaceAll(strings.TrimSpace(p), "\n", "\n    ") + "\n"
	}
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	other := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	curPEM := pemOf(dataLine.FindStringSubmatch(curData)[1])
	for _, tc := range []struct {
		name        string
		cur, pl     string // the Secret's data part on each side
		want, not   string
		failsOnWarn bool
	}{
		{name: "stringData, same key", cur: stringData(curPEM), pl: plData, want: "no-change", not: "sa-key-unread"},
		{name: "stringData, another key", cur: curData, pl: stringData(other), want: "sa-key-change", not: "no-change", failsOnWarn: true},
		{name: "stringData wins over data", cur: curData, pl: plData + stringData(other), want: "sa-key-change", not: "no-change", failsOnWarn: true},
		{name: "no key on either side", cur: "data:\n  other: eA==\n", pl: "stringData:\n  note: none\n", want: "sa-key-unread", not: "no-change", failsOnWarn: true},
		{name: "no key on the planned side", cur: curData, pl: "data: {}\n", want: "sa-key-unread", not: "sa-key-change", failsOnWarn: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			write := func(name, doc, from, to string) *input.Set {
				p := filepath.Join(tmp, name)
				if err := os.WriteFile(p, []byte(strings.Replace(doc, from, to, 1)), 0o600); err != nil {
					t.Fatal(err)
				}
				s, err := input.Load(t.Context(), p)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				return s
			}
			r, err := preflight.Run(preflight.Config{Current: write("current.yaml", cur, curData, tc.cur), Planned: write("planned.yaml", pl, plData, tc.pl)})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, f := range r.Findings {
				ids = append(ids, f.ID)
			}
			if !slices.Contains(ids, tc.want) || slices.Contains(ids, tc.not) {
				t.Errorf("findings %v: want %s, not %s", ids, tc.want, tc.not)
			}
			if got := finding.AnyAtLeast(r.Findings, catalogue.Warning); got != tc.failsOnWarn {
				t.Errorf("--fail-on warning fails = %v, want %v (%v)", got, tc.failsOnWarn, ids)
			}
			for _, f := range r.Findings {
				if strings.Contains(f.Message, "kid: ") || strings.HasSuffix(f.Message, "kid:") {
					t.Errorf("%s names an empty kid: %s", f.ID, f.Message)
				}
			}
		})
	}
}
