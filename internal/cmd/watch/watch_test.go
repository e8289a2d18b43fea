// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmdtest"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/watch"
)

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(audit, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"fail-on", []string{"--fail-on", "loud"}, "--fail-on"},
		{"interval", []string{"--interval", "0s"}, "--interval"},
		{"interval below 1s", []string{"--interval", "999ms"}, "--interval 999ms: want at least 1s"},
		{"interval 1ns", []string{"--interval", "1ns"}, "--interval 1ns: want at least 1s"},
		{"duration", []string{"--duration", "-1s"}, "--duration"},
		{"live", []string{"--live", "sometimes"}, "--live"},
		{"listen", []string{"--listen", "nonsense"}, "--listen"},
		{"output", []string{"-o", "yaml"}, "output format"},
		{"probe sa", []string{"--probe-serviceaccount", "x"}, "--probe-serviceaccount"},
		{"endpoint", []string{"--endpoint", "http://10.0.0.1"}, "--endpoint"},
		{"token file", []string{"--token-file", "/nonexistent/token"}, "--token-file"},
		{"log file", []string{"--log-file", "/var/log/x.log"}, "--log-file"},
		{"log file missing", []string{"--log-file", "apiserver-1=" + filepath.Join(dir, "apiserver-1.lgo")}, "apiserver-1.lgo: no such file or directory (the file must exist when watch starts)"},
		{"log file a folder", []string{"--log-file", "apiserver-1=" + dir}, "not a regular file"},
		{"log file a device", []string{"--log-file", "apiserver-1=" + os.DevNull}, "--log-file apiserver-1=" + os.DevNull + ": open " + os.DevNull + ": not a regular file"},
		{"audit log", []string{"--audit-log", "/var/log/audit.log"}, `--audit-log: "/var/log/audit.log": want HOST=PATH`},
		{"audit log missing", []string{"--audit-log", "apiserver-1=" + filepath.Join(dir, "audit.lgo")}, "--audit-log apiserver-1=" + filepath.Join(dir, "audit.lgo") + ": stat "},
		{"report is an audit log", []string{"--kubeconfig", kubeconfigFor(t), "--audit-log", "apiserver-1=" + audit, "--report", audit}, "--audit-log apiserver-1"},
		{"audit serviceaccounts", []string{"--audit-serviceaccounts", "-1"}, "--audit-serviceaccounts -1: want 0 or more"},
		{"-n without a Cluster", []string{"-n", "org-a"}, "-n/--namespace org-a: it is the namespace of --capi-cluster; name the Cluster with --capi-cluster NAME"},
		{"capi-cluster bad name", []string{"--capi-cluster", "org-a/w1/x"}, `--capi-cluster "org-a/w1/x": want [NAMESPACE/]NAME`},
		{"capi-cluster and -n disagree", []string{"--capi-cluster", "org-a/w1", "-n", "org-b"}, "--capi-cluster org-a/w1 and -n/--namespace org-b name different namespaces: give one"},
		{"capi-cluster with --lab", []string{"--capi-cluster", "org-a/w1", "--lab", dir}, "--capi-cluster watches a workload cluster and --lab the local lab's members: give one"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmdtest.Usage(t, NewCommand, tt.want, append([]string{"--kubeconfig", "/nonexistent"}, tt.args...)...)
		})
	}
}

// TestCAPIClusterUnreachable: a Cluster named well gets as far as reading it from the management
// cluster (a closed port here): exit 3, naming the Cluster, before any interval runs.
func TestCAPIClusterUnreachable(t *testing.T) {
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
	r := cmdtest.Run(t, NewCommand, nil, "--kubeconfig", kubeconfig, "--timeout", "2s", "--duration", "1s", "-o", "json", "--capi-cluster", "w1", "-n", "org-a")
	if r.Code != cli.ExitUnreachable || !strings.Contains(r.Stderr, "cluster org-a/w1: ") || r.Stdout != "" {
		t.Errorf("exit %d, want %d naming org-a/w1 and nothing on stdout\nstdout: %s\nstderr: %s", r.Code, cli.ExitUnreachable, r.Stdout, r.Stderr)
	}
}

func TestExitFor(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name          string
		worst, failOn catalogue.Severity
		reached       int
		untrusted     bool // the trust matrix was built in no interval
		want          int
	}{
		{"nothing seen", "", catalogue.Info, 3, false, cli.ExitOK},
		{"below fail-on", catalogue.Warning, catalogue.Error, 3, false, cli.ExitOK},
		{"at fail-on", catalogue.Error, catalogue.Error, 3, false, cli.ExitFindings},
		{"above fail-on", catalogue.Critical, catalogue.Warning, 3, false, cli.ExitFindings},
		{"info at info", catalogue.Info, catalogue.Info, 1, false, cli.ExitFindings},
		{"never reached, member-down at error", catalogue.Error, catalogue.Error, 0, false, cli.ExitUnreachable},
		{"never reached, nothing raised", "", catalogue.Error, 0, false, cli.ExitUnreachable},
		{"reached, matrix never built", "", catalogue.Warning, 3, true, cli.ExitUnreachable},
		{"reached, matrix never built, info at info", catalogue.Info, catalogue.Warning, 3, true, cli.ExitUnreachable},
		{"matrix never built, finding at fail-on", catalogue.Error, catalogue.Error, 3, true, cli.ExitFindings},
		{"critical with fail-on none", catalogue.Critical, catalogue.None, 3, false, cli.ExitOK},
		{"fail-on none, never reached", catalogue.Critical, catalogue.None, 0, false, cli.ExitUnreachable},
		{"fail-on none, matrix never built", catalogue.Critical, catalogue.None, 3, true, cli.ExitUnreachable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sum := watch.Summary{Intervals: 3, Worst: tt.worst, Reached: tt.reached, Unreached: "apiserver-1: connection refused", Trusted: 3}
			if tt.untrusted {
				sum.Trusted, sum.Untrusted = 0, "serviceaccounts \"credwatch-probe\" not found: connection refused"
			}
			err := ExitFor(sum, tt.failOn)
			if got := cli.Code(err); got != tt.want {
				t.Fatalf("exit %d, want %d (%v)", got, tt.want, err)
			}
			if tt.want == cli.ExitUnreachable && !strings.Contains(cli.Message(err), "connection refused") {
				t.Errorf("message %q does not say why", cli.Message(err))
			}
		})
	}
}

// TestTimeoutDefault: the default --help gives --timeout is the timeout watch uses when the flag is
// not set, and the flag and --interval still set it.
func TestTimeoutDefault(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		args []string
		want string // "": the default --help states
	}{
		{"default", nil, ""},
		{"short interval", []string{"--interval", "2s"}, "2s"},
		{"long interval", []string{"--interval", "1m"}, "10s"},
		{"set", []string{"--timeout", "3s"}, "3s"},
		{"set above the interval", []string{"--timeout", "20s"}, "20s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd, o := newCommand(cli.Streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
			if err := cmd.ParseFlags(append([]string{"--kubeconfig", kubeconfigFor(t)}, tt.args...)); err != nil {
				t.Fatal(err)
			}
			if err := o.complete(cmd); err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == "" {
				want = cmd.Flags().Lookup("timeout").DefValue
			}
			if got := o.cfg.Check.Timeout.String(); got != want {
				t.Errorf("timeout %s, want %s", got, want)
			}
		})
	}
}

// TestAuditLogFlags: --audit-log and --audit-serviceaccounts reach the watch's Config; 0 names no
// account (the Config's 0 is the default).
func TestAuditLogFlags(t *testing.T) {
	t.Parallel()
	audit := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(audit, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want int
	}{
		{nil, watch.DefaultAuditServiceAccounts},
		{[]string{"--audit-serviceaccounts", "5"}, 5},
		{[]string{"--audit-serviceaccounts", "0"}, -1},
	} {
		cmd, o := newCommand(cli.Streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
		args := append([]string{"--kubeconfig", kubeconfigFor(t), "--audit-log", "apiserver-1=" + audit}, tt.args...)
		if err := cmd.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		if err := o.complete(cmd); err != nil {
			t.Fatal(err)
		}
		if got := o.cfg.AuditLogs; len(got) != 1 || got[0] != (watch.LogFile{Host: "apiserver-1", Path: audit}) {
			t.Errorf("%v: AuditLogs %+v", tt.args, got)
		}
		if o.cfg.AuditServiceAccounts != tt.want {
			t.Errorf("%v: AuditServiceAccounts %d, want %d", tt.args, o.cfg.AuditServiceAccounts, tt.want)
		}
	}
}

// kubeconfigFor writes a kubeconfig for a server nothing listens on: for tests that stop before
// the first interval.
func kubeconfigFor(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: not-a-real-token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
