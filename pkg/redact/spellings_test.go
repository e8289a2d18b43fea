// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"bufio"
	"encoding/base64"
	"os"
	"strings"
	"testing"
)

// jws is a real-looking JWS whose signature is sig.
const jws = hdr + "." + claims + "." + sig

// spellings are the credential spellings of issue #20: each case plants secret in a line that
// Text must take it out of, and want is the whole redacted line where it is worth pinning.
var spellings = []struct{ name, in, secret, want string }{
	{"url userinfo", "Post \"https://admin:Hunter22x@vcenter.example/sdk\": EOF", "Hunter22x", "Post \"https://admin:REDACTED@vcenter.example/sdk\": EOF"},
	{"url userinfo percent", "dial https://u%40corp:Hu%3Anter22@h:443/x", "Hu%3Anter22", "dial https://u%40corp:REDACTED@h:443/x"},
	{"x-auth-token", "X-Auth-Token: gAAAAABkZ0sTokenValue42", "gAAAAABkZ0sTokenValue42", "X-Auth-Token: REDACTED"},
	{"x-auth-token json", `{"X-Auth-Token":["gAAAAABkZ0sTokenValue42"]}`, "gAAAAABkZ0sTokenValue42", ""},
	{"basic", "Authorization: Basic YWRtaW46SHVudGVyMjI=", "YWRtaW46SHVudGVyMjI", "Authorization: Basic REDACTED"},
	{"basic json", `"Authorization":["Basic YWRtaW46SHVudGVyMjI="]`, "YWRtaW46SHVudGVyMjI", ""},
	{"bearer opaque", "Authorization: Bearer not-a-real-token", "not-a-real-token", "Authorization: Bearer REDACTED"},
	{"bearer opaque long", "authorization: bearer 2YotnFZFEjr1zCsicMWpAAqwertyuiop", "2YotnFZFEjr1zCsicMWpAA", ""},
	{"bearer jwt", "Authorization: Bearer " + jws, sig, "Authorization: Bearer " + hdr + "." + claims + "." + Marker},
	{"token=", "GET /api?token=abcdef0123456789&watch=1", "abcdef0123456789", "GET /api?token=REDACTED&watch=1"},
	{"dockerconfig auth", `{"auths":{"r.io":{"auth":"YWRtaW46SHVudGVyMjI="}}}`, "YWRtaW46SHVudGVyMjI", `{"auths":{"r.io":{"auth":"REDACTED"}}}`},
	{"api_key", "api_key=AKIAXYZ12345", "AKIAXYZ12345", "api_key=REDACTED"},
	{"apikey", "apikey: AKIAXYZ12345", "AKIAXYZ12345", "apikey: REDACTED"},
	{"api-key header", "X-Api-Key: AKIAXYZ12345", "AKIAXYZ12345", "X-Api-Key: REDACTED"},
	{"bare secret=", "secret=Hunter22 user=bob", "Hunter22", "secret=REDACTED user=bob"},
	{"bare SECRET=", `env: SECRET="Hunter22"`, "Hunter22", `env: SECRET="REDACTED"`},
	{"pwd=", "connect host=db pwd=Hunter22;", "Hunter22", "connect host=db pwd=REDACTED;"},
	{"pass=", "pass=Hunter22", "Hunter22", "pass=REDACTED"},
	{"aws_secret_access_key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI", "aws_secret_access_key = REDACTED"},
	{"AWS env", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "wJalrXUtnFEMI", "AWS_SECRET_ACCESS_KEY=REDACTED"},
	{"secretKey", "secretKey: wJalrXUtnFEMI", "wJalrXUtnFEMI", "secretKey: REDACTED"},
	{"xml password", "<login><user>u</user><password>Hunter22</password></login>", "Hunter22", "<login><user>u</user><password>REDACTED</password></login>"},
	{"xml ns secret", `<ns1:clientSecret xsi:type="xsd:string">Hunter22</ns1:clientSecret>`, "Hunter22", `<ns1:clientSecret xsi:type="xsd:string">REDACTED</ns1:clientSecret>`},
	{"xml escaped", "fault: &lt;password&gt;Hunter22&lt;/password&gt;", "Hunter22", "fault: &lt;password&gt;REDACTED&lt;/password&gt;"},
	{"xml json-escaped", `"body":"\u003ctoken\u003eHunter22\u003c/token\u003e"`, "Hunter22", ""},
	{"percent key=value", "body=user%3Dbob%26password%3DHunter22%26x%3D1", "Hunter22", "body=user%3Dbob%26password%3DREDACTED%26x%3D1"},
	{"percent json", "q=%7B%22password%22%3A%22Hunter22%22%7D", "Hunter22", "q=%7B%22password%22%3A%22REDACTED%22%7D"},
	{"jwt %2E", "GET /cb?id_token=" + strings.ReplaceAll(jws, ".", "%2E"), sig, ""},
	{"jwt \\u002e", `{"msg":"` + strings.ReplaceAll(jws, ".", `\u002e`) + `"}`, sig, ""},
	{"jwt base64", "auth: " + base64.StdEncoding.EncodeToString([]byte("robot:"+jws)), base64.StdEncoding.EncodeToString([]byte("robot:" + jws))[8:40], ""},
	{"jwt base64 dockerconfig", `{"auths":{"r.io":{"auth":"` + base64.StdEncoding.EncodeToString([]byte(`{"token":"`+jws+`"}`)) + `"}}}`, "", ""},
	{"kubeconfig blob", "data: " + base64.StdEncoding.EncodeToString([]byte("users:\n- user:\n    token: "+jws+"\n")), "", ""},
	{"pem base64", "client-key-data: " + base64.StdEncoding.EncodeToString([]byte("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\n-----END RSA PRIVATE KEY-----\n")), "", ""},
	{"jwt two lines in claims", "token " + hdr + "." + claims[:20] + "\n" + claims[20:] + "." + sig + " end", sig, ""},
	{"jwt two lines in sig", "token " + jws[:len(jws)-10] + "\n" + sig[len(sig)-10:] + " end", sig[len(sig)-10:], ""},
	{"yaml folded key", "      message: 'check x skipped: secretKey:\n        PlantedKey7; next'", "PlantedKey7", ""},
	{"yaml folded basic", "      denied for Authorization: Basic\n        YWRtaW46SHVudGVyMjI=; proxy", "YWRtaW46SHVudGVyMjI", ""},
	{"jwt two lines escaped", `msg="` + hdr + "." + claims + `.\n` + sig + `"`, sig, ""},
}

func TestSpellings(t *testing.T) {
	t.Parallel()
	for _, tc := range spellings {
		t.Run(tc.name, func(t *testing.T) {
			got := Text(tc.in)
			if tc.want != "" && got != tc.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if !strings.Contains(got, Marker) || tc.secret != "" && strings.Contains(got, tc.secret) {
				t.Errorf("Text(%q) = %q: %q survived", tc.in, got, tc.secret)
			}
		})
	}
}

// TestBenign: lines that mention secret-like names but hold no secret come out byte-identical
// (testdata/benign.txt, one a line).
func TestBenign(t *testing.T) {
	t.Parallel()
	for i, line := range benignLines(t) {
		if got := Text(line); got != line {
			t.Errorf("line %d changed:\n  in %q\n got %q", i+1, line, got)
		}
	}
}

func benignLines(t testing.TB) []string {
	f, err := os.Open("testdata/benign.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestSpanOnly: redaction changes only the secret's span, never a bracket or word next to it.
func TestSpanOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"secret_password: {Hunter22}", "secret_password: {REDACTED}"},
		{"login: &{User:u Password:{Hunter22}}", "login: &{User:u Password:{REDACTED}}"},
		{`{"password":"Hunter22"}`, `{"password":"REDACTED"}`},
		{"names Secret kube-system/vsphere-cloud-secret: read", "names Secret kube-system/vsphere-cloud-secret: read"},
		{"password={Hunter22}, next", "password={REDACTED}, next"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	if got := Secret(`vcenter: login {Hunter22} failed`, "Hunter22"); got != "vcenter: login {REDACTED} failed" {
		t.Errorf("Secret ate a neighbour: %q", got)
	}
}

// TestBenignYAML: a credential key that ends a YAML line and nests a mapping, a list or a comment
// keeps them (only a folded scalar value is redacted across the line break).
func TestBenignYAML(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"client_secret:\n  name: app\n", "password:\n  - a\n", "apiKey:\n  # none\n", "secret:\n  name: x\n"} {
		if got := Text(in); got != in {
			t.Errorf("Text(%q) = %q", in, got)
		}
	}
}
