// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmdtest"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/finding"
)

func TestUsageErrors(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := closedKubeconfig(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"fail-on", []string{"--fail-on", "loud"}, "--fail-on"},
		{"probe sa", []string{"--probe-serviceaccount", "nonamespace"}, "--probe-serviceaccount"},
		{"endpoint", []string{"--endpoint", "http://10.0.0.1"}, "--endpoint"},
		{"token file missing", []string{"--token-file", "/nonexistent/token"}, "--token-file /nonexistent/token"},
		{"token file empty", []string{"--token-file", empty}, "empty"},
		{"output", []string{"-o", "csv"}, "output format"},
		{"no-cloud with cloud-login", []string{"--no-cloud", "--cloud-login"}, "--no-cloud and --cloud-login"},
		{"cloud-login-timeout", []string{"--cloud-login", "--cloud-login-timeout", "0s"}, "--cloud-login-timeout"},
		{"args", []string{"extra"}, "unknown command"},
		{"all-contexts with contexts", []string{"--all-contexts", "--contexts", "a"}, "exclude each other"},
		{"all-contexts with context", []string{"--all-contexts", "--context", "a"}, "--context names one cluster"},
		{"contexts with endpoint", []string{"--contexts", "a,b", "--endpoint", "https://10.0.0.1:6443"}, "--endpoint names members of one cluster"},
		{"parallel", []string{"--all-contexts", "--parallel", "0"}, "--parallel"},
		{"parallel too many", []string{"--all-contexts", "--parallel", "257"}, "--parallel 257: at most 256"},
		{"context missing", []string{"--kubeconfig", kubeconfig, "--contexts", "a,nope"}, `context "nope": not in the kubeconfig`},
		{"no contexts", []string{"--kubeconfig", empty, "--all-contexts"}, "no contexts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmdtest.Usage(t, NewCommand, tt.want, append([]string{"--kubeconfig", "/nonexistent"}, tt.args...)...)
		})
	}
}

func TestExitFor(t *testing.T) {
	warn := finding.New("legacy-tokens-in-use", "x")
	errF := finding.New("member-key-drift", "x")
	tests := []struct {
		name   string
		r      check.Report
		failOn catalogue.Severity
		want   int
	}{
		{"clean", check.Report{}, catalogue.Error, cli.ExitOK},
		{"warning below fail-on", check.Report{Findings: []finding.Finding{warn}}, catalogue.Error, cli.ExitOK},
		{"warning at fail-on", check.Report{Findings: []finding.Finding{warn}}, catalogue.Warning, cli.ExitFindings},
		{"error", check.Report{Findings: []finding.Finding{errF}}, catalogue.Error, cli.ExitFindings},
		{"partial, nothing found", check.Report{Partial: true}, catalogue.Error, cli.ExitUnreachable},
		{"partial with findings", check.Report{Partial: true, Findings: []finding.Finding{errF}}, catalogue.Error, cli.ExitFindings},
		{"unreachable", check.Report{Unreachable: true, Partial: true, Findings: []finding.Finding{errF}}, catalogue.Error, cli.ExitUnreachable},
		{"error with fail-on none", check.Report{Findings: []finding.Finding{errF}}, catalogue.None, cli.ExitOK},
		{"partial with fail-on none", check.Report{Partial: true, Findings: []finding.Finding{errF}}, catalogue.None, cli.ExitUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cli.Code(ExitFor(&tt.r, tt.failOn)); got != tt.want {
				t.Errorf("exit %d, want %d", got, tt.want)
			}
		})
	}
}

// TestFailedRunLogs: a run that fails before it has a report (a closed cluster port, bad flags)
// still writes, with -o sarif or junit, a log that says so: a valid SARIF log whose invocation is
// not successful, with the exit code and the error, or a JUnit file with a failing case.
func TestFailedRunLogs(t *testing.T) {
	kubeconfig := closedKubeconfig(t)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unreachable sarif", []string{"-o", "sarif"}, cli.ExitUnreachable, "cluster not reachable"},
		{"unreachable junit", []string{"-o", "junit"}, cli.ExitUnreachable, "cluster not reachable"},
		{"fleet sarif", []string{"--all-contexts", "-o", "sarif"}, cli.ExitUsage, "-o sarif"},
		{"bad flag value sarif", []string{"-o", "sarif", "--cloud-login", "--cloud-login-timeout", "0s"}, cli.ExitUsage, "--cloud-login-timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cmdtest.Run(t, NewCommand, nil, append([]string{"--kubeconfig", kubeconfig, "--timeout", "2s"}, tt.args...)...)
			if r.Code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.Code, tt.code, r.Stderr)
			}
			cmdtest.FailedRun(t, r.Stdout, tt.code, tt.want)
		})
	}
}

// closedKubeconfig is a kubeconfig whose one context, current, names a closed port.
func closedKubeconfig(t *testing.T) string {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: a, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: a, user: {token: x}}]
contexts: [{name: a, context: {cluster: a, user: a}}]
current-context: a
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// TestPrintRBAC: --print-rbac prints deploy/clusterrole.yaml whole without any kubeconfig, so a
// binary from an archive carries the RBAC its skip reasons point to.
func TestPrintRBAC(t *testing.T) {
	r := cmdtest.Run(t, NewCommand, nil, "--print-rbac", "--kubeconfig", "/nonexistent/kubeconfig")
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	want, err := os.ReadFile("../../../deploy/clusterrole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if r.Stdout != string(want) {
		t.Error("--print-rbac does not print deploy/clusterrole.yaml")
	}
	for _, kind := range []string{"kind: Namespace", "kind: ServiceAccount", "kind: ClusterRole", "kind: Role"} {
		if !strings.Contains(r.Stdout, kind) {
			t.Errorf("no %s in the printed RBAC", kind)
		}
	}
}

// TestCAPIClusterFlags: --capi-cluster NAME with -n/--namespace (or NAMESPACE/NAME), the
// deprecated --cluster with its notice on stderr only, and the usage errors when they disagree.
// The management cluster is a closed port: a Cluster named well gets as far as reading it (exit 3,
// naming the Cluster).
func TestCAPIClusterFlags(t *testing.T) {
	kubeconfig := closedKubeconfig(t)
	const deprecated = "Flag --cluster has been deprecated, use --capi-cluster NAME -n NAMESPACE (--cluster will be kubectl's kubeconfig cluster)\n"
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"name and -n", []string{"--capi-cluster", "w1", "-n", "org-a"}, cli.ExitUnreachable, "cluster org-a/w1: "},
		{"name and --namespace", []string{"--capi-cluster", "w1", "--namespace", "org-a"}, cli.ExitUnreachable, "cluster org-a/w1: "},
		{"NAMESPACE/NAME", []string{"--capi-cluster", "org-a/w1"}, cli.ExitUnreachable, "cluster org-a/w1: "},
		{"namespace from the context", []string{"--capi-cluster", "w1"}, cli.ExitUnreachable, "cluster default/w1: "},
		{"deprecated --cluster", []string{"--cluster", "org-a/w1"}, cli.ExitUnreachable, deprecated},
		{"deprecated --cluster reads the same", []string{"--cluster", "w1", "-n", "org-a"}, cli.ExitUnreachable, "cluster org-a/w1: "},
		{"both, the same Cluster", []string{"--capi-cluster", "w1", "-n", "org-a", "--cluster", "org-a/w1"}, cli.ExitUnreachable, "cluster org-a/w1: "},
		{"both, different Clusters", []string{"--capi-cluster", "w1", "--cluster", "org-a/w1"}, cli.ExitUsage,
			"credwatch: error: --capi-cluster w1 and --cluster org-a/w1 (its deprecated spelling) disagree: give --capi-cluster only\n"},
		{"-n contradicts NAMESPACE/NAME", []string{"--capi-cluster", "org-a/w1", "-n", "org-b"}, cli.ExitUsage,
			"credwatch: error: --capi-cluster org-a/w1 and -n/--namespace org-b name different namespaces: give one\n"},
		{"-n without a Cluster", []string{"-n", "org-a"}, cli.ExitUsage,
			"credwatch: error: -n/--namespace org-a: it is the namespace of --capi-cluster; name the Cluster with --capi-cluster NAME\n"},
		{"bad name", []string{"--capi-cluster", "org-a/w1/x"}, cli.ExitUsage, `credwatch: error: --capi-cluster "org-a/w1/x": want [NAMESPACE/]NAME`},
		{"with --all-contexts", []string{"--capi-cluster", "w1", "--all-contexts"}, cli.ExitUsage, "--capi-cluster checks one workload cluster"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cmdtest.Run(t, NewCommand, nil, append([]string{"--kubeconfig", kubeconfig, "--timeout", "2s", "-o", "json"}, tt.args...)...)
			if r.Code != tt.code || !strings.Contains(r.Stderr, tt.stderr) {
				t.Errorf("exit %d, want %d and %q in stderr\nstderr:\n%s", r.Code, tt.code, tt.stderr, r.Stderr)
			}
			if strings.Contains(r.Stdout, "deprecated") {
				t.Errorf("the deprecation notice is on stdout:\n%s", r.Stdout)
			}
			if slices.Contains(tt.args, "--cluster") != strings.Contains(r.Stderr, deprecated) {
				t.Errorf("deprecation notice on stderr only with --cluster, got:\n%s", r.Stderr)
			}
		})
	}
}
