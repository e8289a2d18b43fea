// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package app

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/redact/redacttest"
)

// TestTerminalGetsText feeds each hostile string through the terminal paths Main owns: the
// error line on stderr (a flag value, a file name echoed back) and a table on stdout (a token's issuer).
// Neither holds it raw (some paths quote it with %q first, which is as safe).
func TestTerminalGetsText(t *testing.T) {
	dir := t.TempDir()
	for i, h := range redacttest.HostileText {
		t.Run(h.Name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			Main([]string{"credwatch", "check", "--fail-on", "x" + h.Raw}, strings.NewReader(""), &out, &errOut)
			raw := func(s string) bool { return strings.IndexFunc(s, redact.NeedsQuote) >= 0 }
			if raw(errOut.String()) || !strings.Contains(errOut.String(), "severity") {
				t.Errorf("stderr %q holds %q raw", errOut.String(), h.Raw)
			}
			errOut.Reset()
			Main([]string{"credwatch", "token", "inspect", filepath.Join(dir, "missing"+h.Raw)}, strings.NewReader(""), &out, &errOut)
			if raw(errOut.String()) || !strings.Contains(errOut.String(), "missing") {
				t.Errorf("stderr %q holds %q raw", errOut.String(), h.Raw)
			}

			enc := func(v any) string {
				b, _ := json.Marshal(v)
				return base64.RawURLEncoding.EncodeToString(b)
			}
			path := filepath.Join(dir, string(rune('a'+i))+".jwt")
			tok := enc(map[string]string{"alg": "RS256", "kid": "k"}) + "." + enc(map[string]any{"iss": "https://" + h.Raw, "sub": "system:serviceaccount:a:b", "exp": 2000000000}) + ".c2ln"
			if err := os.WriteFile(path, []byte(tok), 0o600); err != nil {
				t.Fatal(err)
			}
			out.Reset()
			errOut.Reset()
			Main([]string{"credwatch", "token", "inspect", path}, strings.NewReader(""), &out, &errOut)
			if raw(out.String()) || !strings.Contains(out.String(), "Issuer:") {
				t.Errorf("table %q (stderr %q) holds %q raw", out.String(), errOut.String(), h.Raw)
			}
		})
	}
}
