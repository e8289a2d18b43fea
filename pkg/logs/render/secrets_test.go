// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package render

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/redact/redacttest"
	"github.com/credwatch/credwatch/pkg/report"
)

// secretLines are authentication failures the classifier names; a planted secret goes after
// "Unable", in the message, so the line stays what it is.
var secretLines = []string{
	`2026-11-29T08:16:43.535948123Z stderr F E1129 08:16:43.535948       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, invalid signature, no keys found]"`,
	`kube-apiserver-ip-10-0-252-80.eu-west-2.compute.internal kube-apiserver E1215 08:16:43.535948       1 authentication.go:63] "Unable to authenticate the request" err="[invalid bearer token, square/go-jose: error in cryptographic primitive]"`,
	`{"log":"E1129 08:00:01.017000       1 authentication.go:75] \"Unable to authenticate the request\" err=\"[invalid bearer token, invalid signature, no keys found]\"\n","stream":"stderr","time":"2026-11-29T08:00:01.017Z"}`,
	`2026-11-29T08:00:04.918Z stderr F E1129 08:00:04.918000       1 authentication.go:53] Unable to authenticate the request due to an error: [invalid bearer token, context deadline exceeded]`,
}

// renderAll is every output of `credwatch logs` for data: table, JSON, YAML, SARIF and the HTML
// page.
func renderAll(t *testing.T, data string) string {
	t.Helper()
	return renderAllWith(t, logs.Config{}, data)
}

// renderAllWith is renderAll with cfg's reading blocks (BlockSize, MaxLineBytes).
func renderAllWith(t *testing.T, cfg logs.Config, data string) string {
	t.Helper()
	in := logs.Input{Name: "kube-apiserver.log", Host: "cp-1", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(data)), nil
	}}
	cfg.Year, cfg.Workers, cfg.Now = 2026, 1, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	r, err := logs.Analyze(context.Background(), cfg, []logs.Input{in})
	if err != nil {
		return err.Error()
	}
	var b bytes.Buffer
	for _, f := range []report.Format{report.Table, report.JSON, report.YAML, report.SARIF} {
		if err := report.Print(&b, f, New(r)); err != nil {
			t.Fatal(err)
		}
	}
	// The SARIF log as it is, before report.Print's redacting writer: its messages are
	// redacted themselves.
	sarif, err := json.Marshal(New(r).SARIF())
	if err != nil {
		t.Fatal(err)
	}
	b.Write(sarif)
	if err := New(r).WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestTokenFollowedByFullStop is the regression for issue 9's second leak: a token followed by
// a full stop (three dots in the run) kept its signature.
func TestTokenFollowedByFullStop(t *testing.T) {
	sig := redacttest.Marker([]byte("full stop"), 32)
	for _, tail := range []string{".", "..", ",", `"`, "'", ")", ". next", ".\"", ""} {
		line := secretLines[0] + " token=" + redacttest.JWS(sig) + tail + "\n"
		out := renderAll(t, line)
		if !strings.Contains(out, "invalid") {
			t.Fatalf("the line was not reported:\n%s", out)
		}
		if strings.Contains(out, sig) {
			t.Errorf("tail %q: the signature is in the output", tail)
		}
	}
}

// FuzzLogsNoSecret plants a token signature, a JWE ciphertext, a PEM private key or a password
// (as key=value) in the message of a classified line, and in a random line, and checks that no
// output format of the report carries it.
func FuzzLogsNoSecret(f *testing.F) {
	f.Add("", uint8(0), uint8(0), uint16(0), []byte("k"), ".")
	f.Add("Dec 16 09:25:23 host kube-apiserver[1]: ", uint8(1), uint8(1), uint16(500), []byte{1, 2}, "")
	f.Add(`{"log":"x`, uint8(2), uint8(3), uint16(7), []byte("pem"), `"}`)
	f.Add("E1129 08:16:43.535948 1 a.go:1] ", uint8(3), uint8(2), uint16(90), []byte{9}, ", ")
	for i := range spellings37 {
		f.Add("", uint8(4+i), uint8(i), uint16(0), []byte{byte(i)}, " ")
	}
	f.Fuzz(func(t *testing.T, random string, kind, base uint8, pos uint16, seed []byte, tail string) {
		secret, planted := plantForLogs(kind, seed)
		tail = redacttest.Scrub(strings.ReplaceAll(tail, "\n", " "))
		sl := secretLines[int(base)%len(secretLines)]
		msg := strings.Index(sl, "Unable") + len("Unable")
		at := msg + int(pos)%(len(sl)-msg+1)
		line := sl[:at] + " " + planted + tail + sl[at:]
		random = redacttest.Scrub(strings.ReplaceAll(random, "\n", " "))
		data := line + "\n" + random + " " + planted + tail + "\n" + sl + "\n"
		if leak := redacttest.Leak(renderAll(t, data), secret); leak != "" {
			t.Fatalf("secret %q (%s) planted as %q is in the output of\n%s", secret, leak, planted+tail, data)
		}
	})
}

// spellings37 are the credential spellings of issue 37, each with v at the secret's place
// (v is base64url, as redacttest.Marker makes it).
var spellings37 = []func(v string) string{
	func(v string) string { return "X-Vault-Token: " + v },
	func(v string) string { return "X-Amz-Security-Token: " + v },
	func(v string) string { return "Authorization: Negotiate " + v },
	func(v string) string { return "\\n    token: " + v },
	func(v string) string { return "client-key-data: " + v },
	func(v string) string { return "hvs." + v },
	func(v string) string { return "ghp_" + v },
	func(v string) string { return "github_pat_" + v },
	func(v string) string { return "xoxb-" + v },
	func(v string) string { return "ya29." + v },
	func(v string) string { return "AccountName=a;AccountKey=" + v + ";EndpointSuffix=x" },
	func(v string) string { return "?sv=1&sig=" + v },
	func(v string) string { return " --token P" + v },
	func(v string) string { return " --password P" + v },
	func(v string) string { return " -p P" + v },
	func(v string) string { return "Authorization%3A%20Bearer%20" + v },
	func(v string) string {
		return `-----BEGIN PGP PRIVATE KEY BLOCK-----\n` + v + `\n-----END PGP PRIVATE KEY BLOCK-----`
	},
	func(v string) string { return " " + redacttest.KeyLine(v) + " " },
}

// TestSpellings37 plants each spelling of issue 37 in a classified line and in an unclassified
// one: no output of logs (table, JSON, YAML, SARIF, HTML) carries the secret.
func TestSpellings37(t *testing.T) {
	for i, spell := range spellings37 {
		v := redacttest.Marker([]byte{byte(i)}, 24)
		std := strings.NewReplacer("-", "+", "_", "/").Replace(v)
		line := strings.Replace(secretLines[0], "Unable", "Unable "+spell(v), 1)
		out := renderAll(t, line+"\n"+"random "+spell(v)+"\n"+secretLines[1]+"\n")
		if !strings.Contains(out, "invalid") {
			t.Fatalf("%d: the line was not reported", i)
		}
		if strings.Contains(out, v) || strings.Contains(out, std) {
			t.Errorf("%d: %q survived in the output", i, spell(v))
		}
	}
}

// plantForLogs returns a secret and the text that carries it in a log line.
func plantForLogs(kind uint8, seed []byte) (secret, planted string) {
	if k := int(kind % 32); k >= 4 && k-4 < len(spellings37) {
		v := redacttest.Marker(seed, 24)
		if k-4 == len(spellings37)-1 { // KeyLine spells v in standard base64
			v = strings.NewReplacer("-", "+", "_", "/").Replace(v)
		}
		return v, spellings37[k-4](v)
	}
	switch kind % 4 {
	case 0:
		sig := redacttest.Marker(seed, 32)
		return sig, "token=" + redacttest.JWS(sig)
	case 1:
		ct := redacttest.Marker(seed, 32)
		return ct, redacttest.JWE(ct)
	case 2:
		body := redacttest.Marker(seed, 40)
		return body, strings.ReplaceAll(redacttest.PEM(body), "\n", `\n`)
	}
	pw := redacttest.Word(seed)
	forms := []string{"password=" + pw, `"password":"` + pw + `"`, "client_secret: " + pw, `\"password\":\"` + pw + `\"`}
	return pw, forms[int(redacttest.Marker(seed, 1)[0])%len(forms)]
}
