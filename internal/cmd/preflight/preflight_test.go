// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmdtest"
	"github.com/credwatch/credwatch/pkg/clusterapi"
	"github.com/credwatch/credwatch/pkg/preflight/input"
	"github.com/credwatch/credwatch/pkg/preflight/live"
	"github.com/credwatch/credwatch/pkg/redact"
)

// TestPrivateKeyNeverPrinted: a <cluster>-sa Secret carrying a whole private key leaves nothing
// of it in any output format, only its kid.
func TestPrivateKeyNeverPrinted(t *testing.T) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	p := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	b64 := base64.StdEncoding.EncodeToString(p)
	doc := "apiVersion: controlplane.cluster.x-k8s.io/v1beta1\nkind: KubeadmControlPlane\nmetadata:\n  name: lab-cp\n  labels:\n    cluster.x-k8s.io/cluster-name: lab\nspec:\n  replicas: 1\n  version: VERSION\n  kubeadmConfigSpec: {}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: lab-sa\ndata:\n  tls.key: " + b64 + "\n"
	dir := t.TempDir()
	cur, pl := filepath.Join(dir, "current.yaml"), filepath.Join(dir, "planned.yaml")
	_ = os.WriteFile(cur, []byte(strings.Replace(doc, "VERSION", "v1.30.4", 1)), 0o600)
	_ = os.WriteFile(pl, []byte(strings.Replace(doc, "VERSION", "v1.31.1", 1)), 0o600)
	body := strings.Join(strings.Split(string(p), "\n")[1:3], "")
	for _, o := range []string{"table", "wide", "json", "yaml", "sarif"} {
		var out bytes.Buffer
		cmd := NewCommand(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out, Known: &redact.Known{}})
		cmd.SetArgs([]string{"--current", cur, "--planned", pl, "-o", o})
		if err := cmd.Execute(); err != nil {
			t.Fatalf("-o %s: %v\n%s", o, err, out.String())
		}
		s := out.String()
		if strings.Contains(s, "PRIVATE KEY") || strings.Contains(s, body) || strings.Contains(s, b64[:40]) {
			t.Errorf("-o %s printed the private key:\n%s", o, s)
		}
		if o == "json" && !strings.Contains(s, `"signingKey": "kid:`) {
			t.Errorf("-o json lacks the kid:\n%s", s)
		}
	}
}

// fakeManagement reads a management cluster holding Cluster default/lab, whose objects are the
// testdata pair's current side: Read through client-go's fake dynamic client.
func fakeManagement(t *testing.T) func(context.Context, live.Config) (*input.Set, error) {
	t.Helper()
	data, err := os.ReadFile("../../../pkg/preflight/testdata/kcp-rollout-after/current.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, "\n---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n  name: lab\nspec:\n  controlPlaneRef:\n    apiVersion: controlplane.cluster.x-k8s.io/v1beta1\n    kind: KubeadmControlPlane\n    name: lab-cp\n"...)
	var objs []runtime.Object
	for _, doc := range input.Documents(data) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatal(err)
		}
		u.SetNamespace("default")
		objs = append(objs, u)
	}
	return func(ctx context.Context, c live.Config) (*input.Set, error) {
		c.Mgmt = nil
		c.Client = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
			clusterapi.MachineResource: "MachineList", clusterapi.KubeadmConfigResource: "KubeadmConfigList", clusterapi.ProviderResource: "ProviderList",
			clusterapi.DeploymentResource: "DeploymentList", clusterapi.ExtensionConfigResource: "ExtensionConfigList"}, objs...)
		return live.Read(ctx, c)
	}
}

// TestLive: live mode's flags, its two questions (a roll of the current spec; the live side
// against planned files) and its exit codes.
func TestLive(t *testing.T) {
	kubeconfig := closedKubeconfig(t, "default")
	const planned = "../../../pkg/preflight/testdata/kcp-rollout-after/planned.yaml"
	fake := fakeManagement(t)
	tests := []struct {
		name string
		args []string
		real bool // live.Read itself, against the kubeconfig's closed port
		code int
		want []string // in stdout, or stderr for an error
	}{
		{name: "current and capi-cluster", args: []string{"--capi-cluster", "lab", "--current", planned}, code: cli.ExitUsage,
			want: []string{"--current and --capi-cluster both name the running control plane: give one"}},
		{name: "bad cluster", args: []string{"--capi-cluster", "default/lab/x"}, code: cli.ExitUsage, want: []string{`--capi-cluster "default/lab/x": want [NAMESPACE/]NAME`}},
		{name: "empty namespace", args: []string{"--capi-cluster", "/lab"}, code: cli.ExitUsage, want: []string{`--capi-cluster "/lab"`}},
		{name: "nothing named", args: nil, code: cli.ExitUsage, want: []string{"--current and --planned are both required (or --capi-cluster, for live mode)"}},
		{name: "a roll of the current spec", args: []string{"--capi-cluster", "lab", "-o", "json"}, code: cli.ExitOK,
			want: []string{`"rollout-planned"`, "a roll of the current spec", `"no-change"`, `"files": [` + "\n" + `      "cluster default/lab"`,
				"Secret default/lab-kubeconfig not found"}},
		{name: "live against planned files", args: []string{"--capi-cluster", "default/lab", "--planned", planned, "--capi-version", "v1.8.1", "--fail-on", "warning"},
			code: cli.ExitFindings, want: []string{"rollout-planned", "etcd-removed-before-drain"}},
		{name: "fail-on none reports and passes", args: []string{"--capi-cluster", "default/lab", "--planned", planned, "--capi-version", "v1.8.1", "--fail-on", "none", "-o", "json"},
			code: cli.ExitOK, want: []string{"etcd-removed-before-drain", `"failOn": "none"`}},
		{name: "unknown cluster", args: []string{"--capi-cluster", "w9"}, code: cli.ExitUsage,
			want: []string{"credwatch: error: cluster default/w9 not found on the management cluster\n"}},
		{name: "management cluster not reached", args: []string{"--capi-cluster", "lab"}, real: true, code: cli.ExitUnreachable,
			want: []string{"credwatch: error: read cluster default/lab: ", "127.0.0.1:1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			read := fake
			if tc.real {
				read = live.Read
			}
			r := cmdtest.Run(t, func(s cli.Streams) *cobra.Command { return newCommand(s, read) }, nil,
				append([]string{"--kubeconfig", kubeconfig}, tc.args...)...)
			if r.Code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Stdout+r.Stderr, w) {
					t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", w, r.Stdout, r.Stderr)
				}
			}
		})
	}
}

// TestFailedRunSARIF: bad input and an unreachable management cluster write, with -o sarif, a
// SARIF log whose invocation failed with the exit code and the error.
func TestFailedRunSARIF(t *testing.T) {
	const pair = "../../../pkg/preflight/testdata/kcp-rollout-after/"
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("kind: [unclosed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unparsable current", []string{"--current", bad, "--planned", pair + "planned.yaml"}, "bad.yaml"},
		{"missing planned", []string{"--current", pair + "current.yaml", "--planned", "/nonexistent/planned.yaml"}, "/nonexistent/planned.yaml"},
		{"capi-version", []string{"--current", pair + "current.yaml", "--planned", pair + "planned.yaml", "--capi-version", "garbage"}, "--capi-version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cmdtest.Run(t, NewCommand, nil, append(tt.args, "-o", "sarif")...)
			if r.Code != cli.ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", r.Code, cli.ExitUsage, r.Stderr)
			}
			cmdtest.FailedRun(t, r.Stdout, cli.ExitUsage, tt.want)
		})
	}
}

// TestCAPIVersion: --capi-version takes a Cluster API release, vX.Y or vX.Y.Z, and refuses
// anything else (exit 2) instead of turning the version-dependent findings off.
func TestCAPIVersion(t *testing.T) {
	const pair = "../../../pkg/preflight/testdata/kcp-rollout-after/"
	tests := []struct {
		value string
		ok    bool
	}{
		{"v1.8.1", true}, {"1.8.4", true}, {"v1.9", true}, {"v1.10.0-rc.1", true},
		{"garbage", false}, {"v1", false}, {"v1.8.1.2", false}, {"v01.8", false}, {"v1.x", false}, {" v1.8.1", false},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			r := cmdtest.Run(t, NewCommand, nil, "--current", pair+"current.yaml", "--planned", pair+"planned.yaml", "--capi-version", tt.value)
			if refused := r.Code == cli.ExitUsage; refused == tt.ok {
				t.Errorf("exit %d, refused %v, want accepted %v; stderr %q", r.Code, refused, tt.ok, r.Stderr)
			}
		})
	}
}

// TestCAPIClusterFlags: --capi-cluster NAME with -n/--namespace (or NAMESPACE/NAME), the
// deprecated --cluster with its notice on stderr only, and the usage errors when they disagree.
func TestCAPIClusterFlags(t *testing.T) {
	kubeconfig := closedKubeconfig(t, "other")
	const (
		pair       = "../../../pkg/preflight/testdata/kcp-rollout-after/"
		deprecated = "Flag --cluster has been deprecated, use --capi-cluster NAME -n NAMESPACE (--cluster will be kubectl's kubeconfig cluster)\n"
	)
	fake := fakeManagement(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // in stdout
		stderr string // in stderr
	}{
		{name: "name and -n", args: []string{"--capi-cluster", "lab", "-n", "default"}, code: cli.ExitOK, stdout: `"cluster default/lab"`},
		{name: "name and --namespace", args: []string{"--capi-cluster", "lab", "--namespace", "default"}, code: cli.ExitOK, stdout: `"cluster default/lab"`},
		{name: "NAMESPACE/NAME", args: []string{"--capi-cluster", "default/lab"}, code: cli.ExitOK, stdout: `"cluster default/lab"`},
		{name: "NAMESPACE/NAME and the same -n", args: []string{"--capi-cluster", "default/lab", "-n", "default"}, code: cli.ExitOK, stdout: `"cluster default/lab"`},
		{name: "namespace from the context", args: []string{"--capi-cluster", "lab"}, code: cli.ExitUsage,
			stderr: "credwatch: error: cluster other/lab not found on the management cluster\n"},
		{name: "deprecated --cluster", args: []string{"--cluster", "default/lab"}, code: cli.ExitOK, stdout: `"cluster default/lab"`, stderr: deprecated},
		{name: "deprecated --cluster with -n", args: []string{"--cluster", "lab", "-n", "default"}, code: cli.ExitOK, stdout: `"cluster default/lab"`, stderr: deprecated},
		{name: "both, the same Cluster", args: []string{"--capi-cluster", "lab", "-n", "default", "--cluster", "default/lab"}, code: cli.ExitOK,
			stdout: `"cluster default/lab"`, stderr: deprecated},
		{name: "both, different Clusters", args: []string{"--capi-cluster", "lab", "--cluster", "default/lab"}, code: cli.ExitUsage,
			stderr: "credwatch: error: --capi-cluster lab and --cluster default/lab (its deprecated spelling) disagree: give --capi-cluster only\n"},
		{name: "-n contradicts NAMESPACE/NAME", args: []string{"--capi-cluster", "default/lab", "-n", "other"}, code: cli.ExitUsage,
			stderr: "credwatch: error: --capi-cluster default/lab and -n/--namespace other name different namespaces: give one\n"},
		{name: "-n contradicts the deprecated --cluster", args: []string{"--cluster", "default/lab", "-n", "other"}, code: cli.ExitUsage,
			stderr: "credwatch: error: --cluster default/lab and -n/--namespace other name different namespaces: give one\n"},
		{name: "-n without a Cluster", args: []string{"-n", "default", "--current", pair + "current.yaml", "--planned", pair + "planned.yaml"}, code: cli.ExitUsage,
			stderr: "credwatch: error: -n/--namespace default: it is the namespace of --capi-cluster; name the Cluster with --capi-cluster NAME\n"},
		{name: "bad -n", args: []string{"--capi-cluster", "lab", "-n", "No_Such"}, code: cli.ExitUsage, stderr: `credwatch: error: -n/--namespace "No_Such": not a namespace name: a lowercase RFC 1123 label must consist of`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := cmdtest.Run(t, func(s cli.Streams) *cobra.Command { return newCommand(s, fake) }, nil,
				append([]string{"--kubeconfig", kubeconfig, "-o", "json"}, tc.args...)...)
			if r.Code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stdout, tc.stdout) || !strings.Contains(r.Stderr, tc.stderr) {
				t.Errorf("want %q in stdout and %q in stderr\nstdout:\n%s\nstderr:\n%s", tc.stdout, tc.stderr, r.Stdout, r.Stderr)
			}
			if strings.Contains(r.Stdout, "deprecated") {
				t.Errorf("the deprecation notice is on stdout:\n%s", r.Stdout)
			}
			if !slices.Contains(tc.args, "--cluster") && strings.Contains(r.Stderr, "deprecated") {
				t.Errorf("a deprecation notice without --cluster:\n%s", r.Stderr)
			}
		})
	}
}

// closedKubeconfig is a kubeconfig whose current context, in namespace ns, names port 1 on
// loopback, which refuses at once: a management cluster that cannot be read.
func closedKubeconfig(t *testing.T, ns string) string {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: m, cluster: {server: \"https://127.0.0.1:1\"}}]\n"+
		"users: [{name: u, user: {token: x}}]\ncontexts: [{name: m, context: {cluster: m, user: u, namespace: "+ns+"}}]\ncurrent-context: m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// TestSignerMaxTokenExpiration: the flag reaches the prediction; a negative one is exit 2.
func TestSignerMaxTokenExpiration(t *testing.T) {
	dir := "../../../pkg/preflight/testdata/static-signer-on"
	for _, tc := range []struct {
		flag, want string
		code       int
	}{
		{"5m", "signer-max-lifetime-too-short", cli.ExitFindings},
		{"24h", "signer-with-key-files", cli.ExitFindings},
		{"-1s", "want a positive duration", cli.ExitUsage},
	} {
		var out bytes.Buffer
		cmd := NewCommand(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out, Known: &redact.Known{}})
		cmd.SetArgs([]string{"--current", filepath.Join(dir, "current.yaml"), "--planned", filepath.Join(dir, "planned.yaml"), "--signer-max-token-expiration", tc.flag, "-o", "json"})
		err := cmd.Execute()
		if cli.Code(err) != tc.code || !strings.Contains(out.String()+errString(err), tc.want) {
			t.Errorf("%s: exit %d (%v), want %d and %q in:\n%s", tc.flag, cli.Code(err), err, tc.code, tc.want, out.String())
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestJWKSPrivateMembersNeverPrinted: a JWKS given with its private members is read as its
// public keys; no output format carries a private member's value.
func TestJWKSPrivateMembersNeverPrinted(t *testing.T) {
	src := "../../../pkg/preflight/testdata/static-signer-on/planned.yaml"
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "UFJJVkFURS1NRU1CRVItVkFMVUU"
	doc := strings.Replace(string(b), `"kty":"EC"`, `"kty":"EC","d":"`+secret+`","p":"`+secret+`"`, 1)
	if doc == string(b) {
		t.Fatal("the planned JWKS was not found")
	}
	pl := filepath.Join(t.TempDir(), "planned.yaml")
	if err := os.WriteFile(pl, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"table", "wide", "json", "yaml", "sarif", "junit"} {
		var out bytes.Buffer
		cmd := NewCommand(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out, Known: &redact.Known{}})
		cmd.SetArgs([]string{"--current", "../../../pkg/preflight/testdata/static-signer-on/current.yaml", "--planned", pl, "-o", o})
		// SARIF and JUnit carry results only, not the report's notes.
		noted := o == "sarif" || o == "junit"
		err := cmd.Execute()
		if cli.Code(err) != cli.ExitFindings {
			t.Fatalf("-o %s: %v\n%s", o, err, out.String())
		}
		noted = noted || strings.Contains(out.String(), "private key material")
		if strings.Contains(out.String(), secret) || !noted {
			t.Errorf("-o %s: a private member printed, or no note that it was dropped:\n%s", o, out.String())
		}
	}
}
