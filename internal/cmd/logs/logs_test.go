// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmdtest"
)

const seedLog = "../../../pkg/logs/testdata/seed-000.log"

func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCommand(cli.Streams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true // as the root command is: main prints the error once
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(context.Background())
	if msg := cli.Message(err); msg != "" {
		errOut.WriteString(msg + "\n")
	}
	return out.String(), errOut.String(), cli.Code(err)
}

func TestCommand(t *testing.T) {
	t.Parallel()
	seed, err := os.ReadFile(seedLog)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	html := filepath.Join(dir, "page.html")
	capture := filepath.Join(dir, "capture")
	if err := os.Mkdir(capture, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"apiserver-1.log": string(seed),
		"evidence.json": "{\n  \"apiVersion\": \"credwatch.dev/v1alpha1\",\n  \"kind\": \"ScenarioEvidence\"\n}\n"} {
		if err := os.WriteFile(filepath.Join(capture, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	criLog := filepath.Join(dir, "cri.log")
	if err := os.WriteFile(criLog, []byte(`2026-11-29T08:16:43.535948123Z stderr F E1129 08:16:43.535948       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, stdin    string
		args           []string
		code           int
		stdout, stderr string
		wantFile       string
		notStdout      string
	}{
		{name: "file", code: cli.ExitFindings, args: []string{"--year", "2022", seedLog}, stdout: "host ip-10-0-252-80: token signed with a key"},
		{name: "stdin", code: cli.ExitFindings, stdin: string(seed), args: []string{"--year", "2022", "-"}, stdout: "signing-key-unknown"},
		{name: "json", code: cli.ExitFindings, args: []string{"--year", "2022", "-o", "json", seedLog}, stdout: `"kind": "LogReport"`},
		{name: "sarif", code: cli.ExitFindings, args: []string{"--year", "2022", "-o", "sarif", seedLog}, stdout: `"physicalLocation": {`},
		{name: "yaml", code: cli.ExitFindings, args: []string{"--year", "2022", "-o", "yaml", seedLog}, stdout: "kind: LogReport"},
		{name: "html", code: cli.ExitFindings, args: []string{"--year", "2022", "--html", html, seedLog}, wantFile: html, stdout: "VERDICT"},
		{name: "one bad input of two", code: cli.ExitFindings, args: []string{seedLog, filepath.Join(dir, "missing.log")}, stderr: "missing.log: cannot read: no such file or directory", stdout: "signing-key-unknown"},
		{name: "no readable input", args: []string{filepath.Join(dir, "missing.log")}, code: cli.ExitUsage, stderr: "no input could be read"},
		{name: "quiet", code: cli.ExitFindings, args: []string{"-q", seedLog, filepath.Join(dir, "missing.log")}, stdout: "INPUT PROBLEMS"},
		{name: "controllers without cluster", args: []string{"--controllers", seedLog}, code: cli.ExitUsage, stderr: "need --from-cluster"},
		{name: "from-cluster and files", args: []string{"--from-cluster", seedLog}, code: cli.ExitUsage, stderr: "do not name files"},
		{name: "bad output", args: []string{"-o", "xml", seedLog}, code: cli.ExitUsage, stderr: "output format"},
		{name: "bad progress", args: []string{"--progress", "sometimes", seedLog}, code: cli.ExitUsage, stderr: "--progress"},
		// seed-000 is stern and journal lines: no year, no zone. --since keeps them and says so.
		{name: "since keeps lines it cannot date", code: cli.ExitFindings, args: []string{"--since", "1h", seedLog}, stdout: "lines had no usable time (no year or zone) and were not filtered by --since",
			stderr: "lines had no usable time and were not filtered"},
		{name: "own outputs in a folder", code: cli.ExitFindings, args: []string{"--year", "2022", "-o", "json", capture}, stdout: `"reason": "credwatch's own output (a JSON document of kind ScenarioEvidence), not a log"`,
			stderr: "1 file in directories not read: " + filepath.Join(capture, "evidence.json") + ": credwatch's own output", notStdout: `"host": "evidence"`},
		{name: "include", args: []string{"--include", "*.json", capture}, code: cli.ExitUsage, stderr: "no log files (2 files not read"},
		{name: "bad glob", args: []string{"--exclude", "[", capture}, code: cli.ExitUsage, stderr: `logs --exclude: glob "[": syntax error in pattern`},
		{name: "globs and from-cluster", args: []string{"--from-cluster", "--include", "*.log"}, code: cli.ExitUsage, stderr: "--from-cluster reads none"},
		{name: "since drops old lines", args: []string{"--since", "1h", criLog}, stdout: "no authentication failures found"},
		// --fail-on: seed-000's causes are all at error.
		{name: "fail-on none", args: []string{"--year", "2022", "--fail-on", "none", seedLog}, stdout: "signing-key-unknown"},
		{name: "fail-on above every cause", args: []string{"--year", "2022", "--fail-on", "critical", seedLog}, stdout: "signing-key-unknown"},
		{name: "fail-on warning", args: []string{"--year", "2022", "--fail-on", "warning", seedLog}, code: cli.ExitFindings, stdout: "signing-key-unknown"},
		{name: "fail-on in the SARIF invocation", args: []string{"--year", "2022", "-o", "sarif", seedLog}, code: cli.ExitFindings, stdout: `"exitCode": 1`},
		{name: "fail-on none in the SARIF invocation", args: []string{"--year", "2022", "-o", "sarif", "--fail-on", "none", seedLog}, stdout: `"exitCode": 0`},
		{name: "bad fail-on", args: []string{"--fail-on", "loud", seedLog}, code: cli.ExitUsage, stderr: `--fail-on: severity "loud": want one of info, warning, error, critical, none`},
		{name: "nothing found passes at any fail-on", args: []string{"--fail-on", "info", "--since", "1h", criLog}, stdout: "no authentication failures found"},
		// JUnit: one case per cause of the verdict, failed as the exit code says.
		{name: "junit fails a cause at fail-on", args: []string{"--year", "2022", "-o", "junit", seedLog}, code: cli.ExitFindings,
			stdout: `<testcase name="signing-key-unknown on ip-10-0-252-80" classname="credwatch logs">` + "\n" + `    <failure message="host ip-10-0-252-80`},
		{name: "junit with fail-on none fails nothing", args: []string{"--year", "2022", "-o", "junit", "--fail-on", "none", seedLog}, stdout: `failures="0"`},
		{name: "junit with nothing found", args: []string{"-o", "junit", "--since", "1h", criLog}, stdout: `<testcase name="verdict" classname="credwatch logs"></testcase>`},
		{name: "junit for bad input", args: []string{"-o", "junit", "/nonexistent/kube-apiserver.log"}, code: cli.ExitUsage, stdout: `<testcase name="run"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := run(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout)
			}
			if tt.notStdout != "" && strings.Contains(stdout, tt.notStdout) {
				t.Errorf("stdout has %q:\n%s", tt.notStdout, stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr)
			}
			if n := strings.Count(stderr, "no usable time"); n > 1 {
				t.Errorf("the unfiltered lines are told %d times on stderr, want once:\n%s", n, stderr)
			}
			if tt.name == "quiet" && stderr != "" {
				t.Errorf("--quiet printed diagnostics: %s", stderr)
			}
			if tt.wantFile != "" {
				if b, err := os.ReadFile(tt.wantFile); err != nil || !bytes.Contains(b, []byte("<svg")) {
					t.Errorf("%s: %v, svg=%v", tt.wantFile, err, bytes.Contains(b, []byte("<svg")))
				}
			}
		})
	}
}

func TestJSONContract(t *testing.T) {
	t.Parallel()
	stdout, _, code := run(t, "", "--year", "2022", "-o", "json", seedLog)
	if code != cli.ExitFindings {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Events     []map[string]any
		Verdict    []map[string]any
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.APIVersion != "credwatch.dev/v1alpha1" || doc.Kind != "LogReport" || len(doc.Events) == 0 || len(doc.Verdict) == 0 {
		t.Fatalf("document: %+v", doc)
	}
	for _, ev := range doc.Events {
		for _, k := range []string{"cause", "host", "component", "time", "line"} {
			if _, ok := ev[k]; !ok {
				t.Errorf("event lacks %q: %v", k, ev)
			}
		}
	}
}

func TestOptionsConfig(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	o := &options{since: 2 * time.Hour, evidence: 3, workers: 4, year: 2025}
	cfg := o.config(now)
	if !cfg.Since.Equal(now.Add(-2*time.Hour)) || cfg.Evidence != 3 || cfg.Workers != 4 || cfg.Year != 2025 || !cfg.Now.Equal(now) {
		t.Fatalf("config %+v", cfg)
	}
}

func TestProgressBar(t *testing.T) {
	t.Parallel()
	tests := []struct {
		read, total int64
		want        string
	}{
		{512 << 20, 1 << 30, "[===============>              ]  50%  512 MB / 1.0 GB  256 MB/s"},
		{3 << 30, 0, "3.0 GB read  1.5 GB/s"},
	}
	for _, tt := range tests {
		if got := bar(tt.read, tt.total, 2*time.Second); got != tt.want {
			t.Errorf("bar(%d, %d) = %q, want %q", tt.read, tt.total, got, tt.want)
		}
	}
}

// TestFieldMixed runs credwatch logs on a file of lines copied from public bug reports (relayed
// by token consumers, pasted as fragments, from cloud SDKs): table, JSON and HTML each show the
// consumer as the component and the right cause.
func TestFieldMixed(t *testing.T) {
	t.Parallel()
	const mixed = "../../../pkg/logs/testdata/field-mixed.log"
	want := [][2]string{ // component, cause
		{"istiod", "signing-key-unknown"}, {"vault", "bound-object-invalidated"},
		{"istio-csr", "serviceaccount-recreated"}, {"dapr-sentry", "bound-object-invalidated"},
		{"aws", "oidc-provider-missing"}, {"azure", "cloud-web-identity-failed"},
		{"gcp", "cloud-credentials-missing"}, {"digitalocean", "cloud-login-failed"},
		{"kubelet", "cert-expired"}, {"harbor-core", "token-expired"}, {"apiserver", "token-expired"},
	}
	table, _, code := run(t, "", "--year", "2026", "--fail-on", "none", mixed)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, w := range want {
		if !regexp.MustCompile(`(?m)^\S+\s+` + regexp.QuoteMeta(w[0]) + `\s+` + regexp.QuoteMeta(w[1]) + `\s`).MatchString(table) {
			t.Errorf("table has no %s row for %s:\n%s", w[1], w[0], table)
		}
	}
	if !strings.Contains(table, "client-unauthorized [metrics-server] → token-expired") {
		t.Errorf("table does not explain metrics-server's 401 by token-expired:\n%s", table)
	}
	out, _, _ := run(t, "", "--year", "2026", "-o", "json", mixed)
	var doc struct {
		Failures []struct{ Component, Cause, Client, ExplainedBy string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[[2]string]bool{}
	for _, f := range doc.Failures {
		seen[[2]string{f.Component, f.Cause}] = true
		if f.Cause == "client-unauthorized" && (f.Client != "metrics-server" || f.ExplainedBy != "token-expired") {
			t.Errorf("json client group %+v", f)
		}
	}
	html := filepath.Join(t.TempDir(), "field.html")
	if _, _, code := run(t, "", "--year", "2026", "--fail-on", "none", "--html", html, mixed); code != 0 {
		t.Fatalf("--html exit %d", code)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("json has no %s failure for %s", w[1], w[0])
		}
		if !bytes.Contains(page, []byte("<td>"+w[0]+"</td><td>"+w[1])) {
			t.Errorf("html has no %s row for %s", w[1], w[0])
		}
	}
}

// TestFailedRunSARIF: with -o sarif, a run with nothing readable or bad flags writes a SARIF log
// whose invocation failed, with the exit code and the error, instead of nothing.
func TestFailedRunSARIF(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"/nonexistent/apiserver.log"}, "/nonexistent/apiserver.log"},
		{"empty folder", []string{t.TempDir()}, "no log files"},
		{"bad evidence", []string{"--evidence", "0", seedLog}, "--evidence"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cmdtest.Run(t, NewCommand, nil, append([]string{"-o", "sarif"}, tt.args...)...)
			if r.Code != cli.ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", r.Code, cli.ExitUsage, r.Stderr)
			}
			cmdtest.FailedRun(t, r.Stdout, cli.ExitUsage, tt.want)
		})
	}
}

// TestHosts reads the layouts of collected logs, each member its own host, and --host.
func TestHosts(t *testing.T) {
	t.Parallel()
	const klog = `E1129 09:00:00.000000       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"` + "\n"
	dir := t.TempDir()
	for _, name := range []string{"dump/kube-system/kube-apiserver-cp-1/logs.txt", "dump/kube-system/kube-apiserver-cp-2/logs.txt",
		"nodes/node-a/kube-apiserver.log", "nodes/node-b/kube-apiserver.log", "same/cp-9/kube-apiserver.log", "same/cp-9/apiserver.txt"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(klog), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := func(name string) string { return filepath.Join(dir, filepath.FromSlash(name)) }
	tests := []struct {
		name   string
		args   []string
		code   int
		hosts  string // summary.hosts of -o json
		stderr string // "" for none
	}{
		{name: "cluster-info dump", args: []string{in("dump")}, hosts: "cp-1 cp-2"},
		{name: "a directory per node", args: []string{in("nodes")}, hosts: "node-a node-b"},
		{name: "two logs of one host warn", args: []string{in("same")}, hosts: "cp-9",
			stderr: `logs: warning: 2 inputs read as one host "cp-9" (` + in("same/cp-9/apiserver.txt") + ", " + in("same/cp-9/kube-apiserver.log") + `): their lines name no host and their paths do not tell them apart; name each with --host FILE=HOST` + "\n"},
		{name: "--host FILE=HOST tells them apart", args: []string{"--host", in("same/cp-9/apiserver.txt") + "=cp-8", in("same")}, hosts: "cp-8 cp-9"},
		{name: "--host DIR=HOST", args: []string{"--host", in("nodes/node-a") + "=ip-10-0-0-1", in("nodes")}, hosts: "ip-10-0-0-1 node-b"},
		{name: "--host HOST for all, then FILE=HOST", args: []string{"--host", "x", "--host", in("dump/kube-system/kube-apiserver-cp-2/logs.txt") + "=y", in("dump")}, hosts: "x y"},
		{name: "--host of a file not read", args: []string{"--host", in("elsewhere.log") + "=cp-1", in("dump")}, code: cli.ExitUsage,
			stderr: "logs --host " + in("elsewhere.log") + "=cp-1: " + in("elsewhere.log") + " is none of the inputs and not a directory above one\n"},
		{name: "--host without a host", args: []string{"--host", "a.log=", in("dump")}, code: cli.ExitUsage, stderr: "logs --host a.log=: want FILE=HOST, both not empty\n"},
		{name: "--host with a slash in the host", args: []string{"--host", "a.log=x/y", in("dump")}, code: cli.ExitUsage, stderr: "logs --host a.log=x/y: a host name has no slash or space\n"},
		{name: "--host FILE twice", args: []string{"--host", "a.log=x", "--host", "./a.log=y", in("dump")}, code: cli.ExitUsage, stderr: "logs --host ./a.log=y: ./a.log is given a host twice\n"},
		{name: "--host HOST twice", args: []string{"--host", "x", "--host", "y", in("dump")}, code: cli.ExitUsage, stderr: "logs --host y: a host for every input is already given (x); name the files: --host FILE=HOST\n"},
		{name: "--host FILE=HOST with --from-cluster", args: []string{"--from-cluster", "--host", "a.log=x"}, code: cli.ExitUsage, stderr: "logs --host a.log=x: --from-cluster reads no files; its hosts are the pods' nodes\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := run(t, "", append([]string{"--year", "2026", "--fail-on", "none", "-o", "json"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", code, tt.code, stderr)
			}
			if tt.code == 0 {
				var doc struct{ Summary struct{ Hosts []string } }
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Fatal(err)
				}
				if got := strings.Join(doc.Summary.Hosts, " "); got != tt.hosts {
					t.Errorf("hosts %q, want %q", got, tt.hosts)
				}
			}
			if tt.code == 0 && stderr != tt.stderr || tt.code != 0 && !strings.HasSuffix(stderr, tt.stderr) {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, tt.stderr)
			}
		})
	}
}

// TestFromClusterFlags: --from-cluster, the deprecated --cluster with its notice on stderr only,
// and the usage error when both are given with values that disagree. The cluster is a closed
// port: reading from it gets as far as listing the pods (exit 3).
func TestFromClusterFlags(t *testing.T) {
	t.Parallel()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: a, cluster: {server: \"https://127.0.0.1:1\"}}]\n"+
		"users: [{name: a, user: {token: x}}]\ncontexts: [{name: a, context: {cluster: a, user: a}}]\ncurrent-context: a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const deprecated = "Flag --cluster has been deprecated, use --from-cluster (--cluster will be kubectl's kubeconfig cluster)\n"
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"from-cluster", []string{"--from-cluster"}, cli.ExitUnreachable, "credwatch: error: logs --from-cluster: "},
		{"deprecated cluster", []string{"--cluster"}, cli.ExitUnreachable, deprecated},
		{"deprecated cluster reads the cluster", []string{"--cluster"}, cli.ExitUnreachable, "credwatch: error: logs --from-cluster: "},
		{"both, agreeing", []string{"--cluster", "--from-cluster"}, cli.ExitUnreachable, "credwatch: error: logs --from-cluster: "},
		{"both, disagreeing", []string{"--cluster", "--from-cluster=false", seedLog}, cli.ExitUsage,
			"credwatch: error: --from-cluster=false and --cluster=true (its deprecated spelling) disagree: give --from-cluster only\n"},
		{"both, disagreeing the other way", []string{"--cluster=false", "--from-cluster"}, cli.ExitUsage,
			"credwatch: error: --from-cluster=true and --cluster=false (its deprecated spelling) disagree: give --from-cluster only\n"},
		{"deprecated cluster and files", []string{"--cluster", seedLog}, cli.ExitUsage, "credwatch: error: logs: --from-cluster reads from the API; do not name files as well\n"},
		{"deprecated cluster=false reads files", []string{"--cluster=false", "--year", "2022", seedLog}, cli.ExitFindings, deprecated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := cmdtest.Run(t, NewCommand, nil, append([]string{"--kubeconfig", kubeconfig, "--timeout", "2s", "-o", "json", "-q"}, tt.args...)...)
			if r.Code != tt.code || !strings.Contains(r.Stderr, tt.stderr) {
				t.Errorf("exit %d, want %d and %q in stderr\nstderr:\n%s", r.Code, tt.code, tt.stderr, r.Stderr)
			}
			if strings.Contains(r.Stdout, "deprecated") {
				t.Errorf("the deprecation notice is on stdout:\n%s", r.Stdout)
			}
			if hasCluster := strings.HasPrefix(strings.Join(tt.args, " "), "--cluster"); hasCluster != strings.Contains(r.Stderr, deprecated) {
				t.Errorf("deprecation notice on stderr only with --cluster, got:\n%s", r.Stderr)
			}
		})
	}
}
