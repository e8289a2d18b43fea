// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/report"
)

// issue9Config is the config of issue 9's first leak: one malformed line, the password in it.
const issue9Config = "[Global]\nuser = \"administrator@vsphere.local\"\npassword \"S3cr3t-Pa55\"\n[VirtualCenter \"vc1.example.com\"]\n"

// printAll renders r in every format `credwatch cloud` offers.
func printAll(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	for _, f := range []report.Format{report.Table, report.JSON, report.YAML, report.SARIF, report.JUnit} {
		if err := report.Print(&b, f, r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return b.String()
}

// clusterWithConfig is a kube-controller-manager reading --cloud-config from ConfigMap
// kube-system/cloud-config key vsphere.conf, which holds data.
func clusterWithConfig(data string) kubernetes.Interface {
	kcm := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-controller-manager-cp1", Namespace: "kube-system"},
		Spec: corev1.PodSpec{NodeName: "cp1", Containers: []corev1.Container{{Name: "kube-controller-manager",
			Command:      []string{"kube-controller-manager", "--cloud-provider=vsphere", "--cloud-config=/etc/cloud/vsphere.conf"},
			VolumeMounts: []corev1.VolumeMount{{Name: "cc", MountPath: "/etc/cloud"}}}},
			Volumes: []corev1.Volume{{Name: "cc", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cloud-config"}}}}}},
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cloud-config", Namespace: "kube-system"},
		Data: map[string]string{"vsphere.conf": data}}
	return fake.NewClientset(kcm, cm)
}

// TestIssue9MalformedLineLeak: the malformed line's password is in no error and in no output
// format, whether the config comes with --config or from the cluster (cloud-config-invalid).
func TestIssue9MalformedLineLeak(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vsphere.conf")
	if err := os.WriteFile(path, []byte(issue9Config), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errs := LoadPaths([]string{path})
	if len(errs) != 1 {
		t.Fatalf("errors = %v, want one", errs)
	}
	var pe *ParseError
	if !errors.As(errs[0], &pe) || pe.Line != 3 || pe.Key != "password" || !strings.Contains(errs[0].Error(), path) {
		t.Fatalf("error %q (%#v) should name %s, line 3 and key password", errs[0], pe, path)
	}
	outputs := map[string]string{
		"error":   errs[0].Error(),
		"config":  printAll(t, Judge(Fetch(context.Background(), FetchOptions{ConfigErrors: errs, NoLogin: true}), "")),
		"cluster": printAll(t, Judge(Fetch(context.Background(), FetchOptions{Client: clusterWithConfig(issue9Config), NoLogin: true}), "")),
	}
	if !strings.Contains(outputs["cluster"], IDConfigInvalid) || !strings.Contains(outputs["cluster"], "line 3, key password") {
		t.Fatalf("the cluster's config should be %s at line 3, key password:\n%s", IDConfigInvalid, outputs["cluster"])
	}
	for name, out := range outputs {
		if strings.Contains(out, "S3cr3t") || strings.Contains(out, "Pa55") {
			t.Errorf("%s carries the password:\n%s", name, out)
		}
	}
}

// TestParseErrorsNameNoValue: every kind of parse error names the line and key, never the value.
func TestParseErrorsNameNoValue(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		line     int
		key      string
	}{
		{"ini no equals", issue9Config, 3, "password"},
		{"ini bad bool", "[Global]\nserver = vc\ninsecure-flag = S3cr3t\n", 3, "insecure-flag"},
		{"ini bad number", "[Global]\nserver = vc\nsoap-roundtrip-count = S3cr3t\n", 3, "soap-roundtrip-count"},
		{"ini bad escape", "[Global]\nserver = vc\npassword = \"S3cr3t\\q\"\n", 3, "password"},
		{"ini unterminated", "[Global]\nserver = vc\npassword = \"S3cr3t\n", 3, "password"},
		{"ini value on its own line", "[Global]\nserver = vc\npassword =\n S3cr3t x\n", 4, ""},
		{"ini unknown key", "[Global]\nserver = vc\nS3cr3t x\n", 3, ""},
		{"yaml wrong type", "global:\n  server: vc\n  port: S3cr3t\n", 3, "port"},
		{"yaml list for a string", "global:\n  server: vc\n  password: [S3cr3t]\n", 3, "password"},
		{"yaml bad bool", "global:\n  insecureFlag: S3cr3t\n", 2, "insecureFlag"},
		{"yaml syntax", "global:\n  server: vc\n  password: S3cr3t: x\n", 3, "password"},
		{"clouds verify", "clouds:\n  c:\n    verify: S3cr3t\n", 3, "verify"},
		{"clouds map key", "clouds:\n  [S3cr3t]: {}\n", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in), Source{Kind: SourceFile, Path: "x.conf"})
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "S3cr3t") || !strings.Contains(msg, "x.conf") {
				t.Fatalf("%q should name x.conf and not the value", msg)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != tc.line || pe.Key != tc.key {
				t.Fatalf("%q: want line %d, key %q", msg, tc.line, tc.key)
			}
		})
	}
}

// TestParseAsProvidersDo: scalars YAML 1.1 or a JSON round trip would turn into numbers or
// booleans stay the text the providers (gcfg, yaml.v2 into string fields) pass to the login.
func TestParseAsProvidersDo(t *testing.T) {
	for _, pw := range []string{"0123", "yes", "on", "true", "12345678901234567890", "1e3", "0x1F", ".5", "1_000"} {
		for name, cfg := range map[string]string{
			"ini":         "[Global]\nserver = vc\nuser = u\npassword = " + pw + "\n",
			"vsphere":     "global:\n  server: vc\n  user: u\n  password: " + pw + "\n",
			"clouds.yaml": "clouds:\n  c:\n    auth:\n      auth_url: https://k/v3\n      username: u\n      password: " + pw + "\n",
		} {
			c, err := Parse([]byte(cfg), Source{Kind: SourceFile, Path: name})
			if err != nil {
				t.Fatalf("%s %q: %v", name, pw, err)
			}
			if len(c.Credentials) != 1 || c.Credentials[0].Password() != pw {
				t.Errorf("%s: password %q read as %q", name, pw, c.Credentials[0].Password())
			}
		}
	}
	// gcfg's own rules: ; and # start a comment unless quoted, quotes and escapes are removed.
	for in, want := range map[string]string{`a;b`: "a", `"a;b"`: "a;b", `"a\"b"`: `a"b`, `a b `: "a b", `"p#1"`: "p#1"} {
		c, err := Parse([]byte("[Global]\nserver = vc\nuser = u\npassword = "+in+"\n"), Source{Kind: SourceFile, Path: "x"})
		if err != nil || c.Credentials[0].Password() != want {
			t.Errorf("password = %s: read %q (%v), want %q", in, c.Credentials[0].Password(), err, want)
		}
	}
}

// TestProviderBadFixtures: the providers' own "bad config" fixtures fail here too, at the line
// the provider's parser stops.
func TestProviderBadFixtures(t *testing.T) {
	for file, line := range map[string]int{"cpi-bad.conf": 2, "cpi-bad.yaml": 5} {
		data, err := os.ReadFile(filepath.Join("testdata", "bad", file))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Parse(data, Source{Kind: SourceFile, Path: file})
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != line || strings.Contains(err.Error(), "password:") {
			t.Errorf("%s: %v, want a ParseError at line %d", file, err, line)
		}
	}
}

func TestScrubSecrets(t *testing.T) {
	items := []Item{{Credential: Credential{Server: "vc"}.WithPassword("Hunter2-long")}, {Credential: Credential{Server: "k"}.WithPassword("ab")}}
	fs := scrubSecrets([]finding.Finding{
		finding.New(IDLoginFailed, "KCM logs: login with Hunter2-long failed"),
		finding.New(IDLoginFailed, "other", finding.Evidence{Value: "password &lt;ab&gt;: Hunter2%2Dlong"}),
	}, items)
	if strings.Contains(fs[0].Message, "Hunter2") || !strings.Contains(fs[0].Message, "KCM logs") {
		t.Errorf("message %q", fs[0].Message)
	}
	if v := fs[1].Evidence[0].Value; v != redact.Withheld {
		t.Errorf("evidence %q: a short password in it should withhold it", v)
	}
}
