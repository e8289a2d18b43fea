// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"encoding/base64"
	"strings"
	"testing"
)

const (
	hdr    = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0"                                        // {"alg":"RS256","kid":"k1"}
	claims = "eyJpc3MiOiJodHRwczovL2t1YmVybmV0ZXMuZGVmYXVsdC5zdmMiLCJzdWIiOiJzeXN0ZW0ifQ" // {"iss":...,"sub":"system"}
	sig    = "c2lnbmF0dXJlLWJ5dGVzLXRoYXQtbXVzdC1nbw"
	jweHdr = "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ" // {"alg":"RSA-OAEP","enc":"A256GCM"}
)

func TestTokens(t *testing.T) {
	jws := hdr + "." + claims + "." + sig
	jwe := jweHdr + ".ZW5jcnlwdGVka2V5.aXZpdml2.Y2lwaGVydGV4dA.dGFndGFn"
	keep := hdr + "." + claims + "." + Marker
	for _, tc := range []struct{ name, in, want string }{
		{"bare", jws, keep},
		{"full stop", "token=" + jws + ".", "token=" + keep + "."},
		{"ellipsis", "token=" + jws + "...", "token=" + keep + "..."},
		{"comma", "a " + jws + ", b", "a " + keep + ", b"},
		{"quoted", `{"token":"` + jws + `"}`, `{"token":"` + keep + `"}`},
		{"bearer", "Authorization: Bearer " + jws, "Authorization: Bearer " + keep},
		{"two", jws + " " + jws, keep + " " + keep},
		{"jwe", "x " + jwe + ".", "x " + jweHdr + "." + Marker + "."},
		{"detached payload", hdr + ".." + sig, hdr + "." + Marker},
		{"glued to a word", "token" + jws, "token" + keep},
		{"after a dotted name", "kube-apiserver.k8s." + jws, "kube-apiserver.k8s." + keep},
		{"hostname", "etcd.kube-system.svc.cluster.local", "etcd.kube-system.svc.cluster.local"},
		{"example hostnames", "example.com.au e1234567.e1234567.e1234567", "example.com.au e1234567.e1234567.e1234567"},
		{"two segments", hdr + "." + claims, hdr + "." + claims},
		{"no alg", base64.RawURLEncoding.EncodeToString([]byte(`{"kid":"x","typ":"JWT"}`)) + ".YQ.YQ", base64.RawURLEncoding.EncodeToString([]byte(`{"kid":"x","typ":"JWT"}`)) + ".YQ.YQ"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Tokens(tc.in)
			if got != tc.want {
				t.Errorf("Tokens(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if strings.Contains(tc.want, Marker) && strings.Contains(got, sig) {
				t.Errorf("signature survived: %q", got)
			}
		})
	}
}

func TestPrivateKeys(t *testing.T) {
	body := "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC"
	for _, in := range []string{
		"-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n",
		"key=\"-----BEGIN RSA PRIVATE KEY-----\\n" + body + "\\n-----END RSA PRIVATE KEY-----\" next",
		"-----BEGIN EC PRIVATE KEY-----\n" + body, // cut off
	} {
		got := PrivateKeys(in)
		if strings.Contains(got, body) || !strings.Contains(got, Marker) {
			t.Errorf("PrivateKeys(%q) = %q", in, got)
		}
	}
	if in := "-----BEGIN CERTIFICATE-----\n" + body + "\n-----END CERTIFICATE-----"; PrivateKeys(in) != in {
		t.Error("a certificate is not secret")
	}
}

func TestSecret(t *testing.T) {
	const pw = `S3<r&t"Pa55 'x'`
	for _, tc := range []struct{ name, in string }{
		{"raw", "login failed for u with " + pw + "."},
		{"xml", "ServerFaultCode: Cannot complete login: <password>S3&lt;r&amp;t&quot;Pa55 &apos;x&apos;</password>"},
		{"xml numeric", "S3&#60;r&#x26;t&#34;Pa55 &#39;x&#39;"},
		{"xml twice", "S3&amp;lt;r&amp;amp;t&amp;quot;Pa55 &amp;apos;x&amp;apos;"},
		{"query", "Post \"https://vc/sdk?password=S3%3Cr%26t%22Pa55+%27x%27\": EOF"},
		{"path", "S3%3cr%26t%22Pa55%20%27x%27"},
		{"json", `{"msg":"S3\u003cr\u0026t\"Pa55 'x'"}`},
		{"go quoted", `"S3<r&t\"Pa55 'x'"`},
		{"mixed", "S3&lt;r%26t\\u0022Pa55 'x'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Secret(tc.in, pw)
			if !strings.Contains(got, Marker) || strings.Contains(got, "Pa55") {
				t.Errorf("Secret(%q) = %q", tc.in, got)
			}
		})
	}
	if got := Secret("Cannot complete login due to an incorrect user name or password", "xyz1"); strings.Contains(got, Marker) {
		t.Errorf("no secret, yet %q", got)
	}
}

func TestSecretShort(t *testing.T) {
	msg := "Cannot complete login due to an incorrect user name or password"
	if got := Secret(msg, "ab"); got != msg {
		t.Errorf("a message without the secret changed: %q", got)
	}
	for _, pw := range []string{"a", "<", "é"} {
		in := msg + " (" + pw + ")"
		if pw == "<" {
			in = msg + " (&lt;)"
		}
		if got := Secret(in, pw); got != Withheld {
			t.Errorf("Secret(%q, %q) = %q, want it withheld", in, pw, got)
		}
	}
}

func TestKeyValues(t *testing.T) {
	for _, in := range []string{
		"login with password=Hunter22 failed",
		`{"user":"u","password":"Hunter22"}`,
		`err="{\"client_secret\":\"Hunter22\"}"`,
		"OS_PASSWORD: Hunter22",
		"application-credential-secret = 'Hunter22'",
		"clientSecret: Hunter22",
		"--etcd-passwd=Hunter22",
	} {
		if got := KeyValues(in); strings.Contains(got, "Hunter22") || !strings.Contains(got, Marker) {
			t.Errorf("KeyValues(%q) = %q", in, got)
		}
	}
	for _, in := range []string{`"passwordSet": true`, "no user, password or Secret", "secretName: creds", "secret-name = vsphere-creds",
		`"secret": {"name": "app-bound"}`, "secret:\n  name: x", "kubernetes.io/secret: x", "secrets: 3", "Secret: x"} {
		if got := KeyValues(in); got != in {
			t.Errorf("KeyValues(%q) = %q, want it unchanged", in, got)
		}
	}
}
