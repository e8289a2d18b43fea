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

// pemLine is a body line of a PKCS#1 RSA private key, as a lone line out of its block.
const pemLine = "MIIEowIBAAKCAQEAx3PlantedPemBodyLine0123456789abcdefghijKLMNOPQRS"

// spellings37 are the credential spellings of issue 37 that survived in every output of logs.
var spellings37 = []struct{ name, in, secret, want string }{
	{"x-vault-token", "X-Vault-Token: s.PlantedVault1234", "PlantedVault1234", "X-Vault-Token: REDACTED"},
	{"x-vault-token json", `"X-Vault-Token":["hvs.CAESIPlantedVault"]`, "PlantedVault", ""},
	{"x-amz-security-token", "X-Amz-Security-Token: FwoGZXIvYXdzPlanted//b+", "FwoGZXIvYXdzPlanted", "X-Amz-Security-Token: REDACTED"},
	{"authorization negotiate", "Authorization: Negotiate YIIPlantedNeg==", "YIIPlantedNeg", "Authorization: Negotiate REDACTED"},
	{"authorization token", `header Authorization: Token PlantedTok99 sent`, "PlantedTok99", "header Authorization: Token REDACTED sent"},
	{"authorization aws4", "Authorization: AWS4-HMAC-SHA256 Credential=AKIAPLANTED/20261206/us-east-1/sts/aws4_request, SignedHeaders=host, Signature=5d67Planted0f", "5d67Planted0f", "Authorization: AWS4-HMAC-SHA256 REDACTED"},
	{"authorization digest quoted", `{"Authorization":"Digest username=\"u\", response=\"6629PlantedDigest\""}`, "6629PlantedDigest", ""},
	{"authorization no scheme", "Authorization: PlantedRawToken0123", "PlantedRawToken0123", "Authorization: REDACTED"},
	{"proxy-authorization", "Proxy-Authorization: Negotiate YIIPlantedProxy", "YIIPlantedProxy", "Proxy-Authorization: Negotiate REDACTED"},
	{"kubeconfig token", "users:\n- name: u\n  user:\n    token: PlantedKubeTok9\n", "PlantedKubeTok9", "users:\n- name: u\n  user:\n    token: REDACTED\n"},
	{"kubeconfig token list", "- token: PlantedKubeTok9", "PlantedKubeTok9", "- token: REDACTED"},
	{"kubeconfig token flow", "  user: {token: PlantedKubeTok9}", "PlantedKubeTok9", "  user: {token: REDACTED}"},
	{"kubeconfig token escaped", `{"log":"users:\n    token: PlantedKubeTok9\n"}`, "PlantedKubeTok9", `{"log":"users:\n    token: REDACTED\n"}`},
	{"kubeconfig client-key-data", "    client-key-data: LS0tLS1CRUdJTlPlantedKey", "LS0tLS1CRUdJTlPlantedKey", "    client-key-data: REDACTED"},
	{"kubeconfig password", "    password: PlantedPw", "PlantedPw", "    password: REDACTED"},
	{"hvs", "vault login hvs.CAESIPlantedVaultToken0123456789 ok", "PlantedVaultToken", "vault login hvs.REDACTED ok"},
	{"hvb", "hvb.AAAAAQPlantedBatchToken.", "PlantedBatchToken", "hvb.REDACTED."},
	{"ghp", "remote: ghp_PlantedGithubToken0123456789abcdefAB", "PlantedGithubToken", "remote: ghp_REDACTED"},
	{"gho", "(gho_PlantedOauthToken0123456789)", "PlantedOauthToken", "(gho_REDACTED)"},
	{"ghs", "x-access-token:ghs_PlantedAppToken0123456789@github.com", "PlantedAppToken", ""},
	{"github_pat", "github_pat_11ABCDPlanted_0123456789abcdef", "11ABCDPlanted", "github_pat_REDACTED"},
	{"xoxb", "slack: xoxb-1234-5678-PlantedSlack", "PlantedSlack", "slack: xoxb-REDACTED"},
	{"ya29", "ya29.a0AfPlantedGoogle-Token_0123", "PlantedGoogle", "ya29.REDACTED"},
	{"azure AccountKey", "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=PlantedAzure/Key+==;EndpointSuffix=core.windows.net", "PlantedAzure", "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=REDACTED;EndpointSuffix=core.windows.net"},
	{"azure SAS sig", "GET https://x.blob.core.windows.net/c/b?sv=2022-11-02&sig=PlantedSig%2Bx%3D&se=2026", "PlantedSig", "GET https://x.blob.core.windows.net/c/b?sv=2022-11-02&sig=REDACTED&se=2026"},
	{"--token", "kubeadm join 10.0.0.1:6443 --token abcdef.0123456789planted --discovery-token-ca-cert-hash sha256:ab", "0123456789planted", "kubeadm join 10.0.0.1:6443 --token REDACTED --discovery-token-ca-cert-hash sha256:ab"},
	{"--password", "vault login --password 'Planted Pw' -method=userpass", "Planted Pw", "vault login --password 'REDACTED' -method=userpass"},
	{"--client-secret json", `"args":["--client-secret", "PlantedClientSec"]`, "PlantedClientSec", `"args":["--client-secret", "REDACTED"]`},
	{"-p", "docker login -u robot -p PlantedDockerPw registry.example", "PlantedDockerPw", "docker login -u robot -p REDACTED registry.example"},
	{"curl -u", "curl -sf -u admin:PlantedCurlPw https://x/y", "PlantedCurlPw", "curl -sf -u admin:REDACTED https://x/y"},
	{"curl --user", `curl --user "admin:Planted Curl"`, "Planted Curl", `curl --user "admin:REDACTED"`},
	{"percent authorization", "q=Authorization%3A%20Bearer%20PlantedPctBearer&x=1", "PlantedPctBearer", "q=Authorization%3A%20Bearer%20REDACTED&x=1"},
	{"percent authorization other", "h=Authorization%3A+Negotiate+YIIPlantedPct%3D%3D%0A", "YIIPlantedPct", ""},
	{"percent vault", "X-Vault-Token%3A%20PlantedPctVault", "PlantedPctVault", "X-Vault-Token%3A%20REDACTED"},
	{"pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGPlantedPgp\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----", "PlantedPgp", "-----BEGIN PGP PRIVATE KEY BLOCK----- REDACTED -----END PGP PRIVATE KEY BLOCK-----"},
	{"pgp unterminated", "key: -----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBGPlantedPgp", "PlantedPgp", ""},
	{"pem line", pemLine, "PlantedPemBodyLine", Marker},
	{"pem line in log", `E1206 msg="read key: ` + pemLine + `"`, "PlantedPemBodyLine", `E1206 msg="read key: REDACTED"`},
	{"pem line padded", "  " + pemLine[:40] + "+/" + pemLine[40:] + "==", "PlantedPemBodyLine", "  " + Marker},
}

func TestSpellings(t *testing.T) {
	t.Parallel()
	for _, tc := range append(spellings, spellings37...) {
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
