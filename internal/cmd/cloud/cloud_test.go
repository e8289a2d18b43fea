// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/credwatch/credwatch/internal/app"
	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/cloud"
	"github.com/credwatch/credwatch/internal/cmdtest"
	"github.com/credwatch/credwatch/pkg/catalogue"
	pkgcloud "github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/cloud/cloudtest"
	"github.com/credwatch/credwatch/pkg/finding"
)

type result struct {
	code   int
	stdout string
	stderr string
	report struct {
		Kind        string `json:"kind"`
		Credentials []struct {
			Provider string `json:"provider"`
			Username string `json:"username"`
			Source   struct {
				Kind, Path, Namespace, Name string
			} `json:"source"`
			Test struct {
				Verdict, Fault string
			} `json:"test"`
			Consumers []struct {
				Component, Pod string
				Rereads, Stale bool
			} `json:"consumers"`
			Action string `json:"action"`
		} `json:"credentials"`
		Findings []struct {
			ID, Severity, Message, Object string
		} `json:"findings"`
		Problems []struct{ Input, Message string } `json:"problems"`
	}
}

func run(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	r := result{code: app.Main(append([]string{"credwatch", "cloud"}, args...), strings.NewReader(""), &out, &errOut)}
	r.stdout, r.stderr = out.String(), errOut.String()
	if strings.Contains(strings.Join(args, " "), "-o json") || contains(args, "json") {
		if err := json.Unmarshal(out.Bytes(), &r.report); err != nil {
			t.Fatalf("decode report: %v\n%s\nstderr: %s", err, out.String(), errOut.String())
		}
	}
	return r
}

func contains(s []string, x string) bool {
	for _, e := range s {
		if e == x {
			return true
		}
	}
	return false
}

func (r result) has(id string) bool {
	for _, f := range r.report.Findings {
		if f.ID == id {
			return true
		}
	}
	return false
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--no-cluster"},
		{"--fail-on", "loud"},
		{"--insecure-skip-tls-verify=aws", "--no-cluster", "--config", "x"},
		{"--kubelet-wait=-1s", "--no-cluster", "--config", "x"},
		{"-o", "html"},
	} {
		if r := run(t, args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %s)", args, r.code, r.stderr)
		}
	}
}

func TestIntegrationCommandVSphereFile(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: vcsim")
	}
	sim := cloudtest.StartVCSim(t, "k8s-vcp@vsphere.local", "Old-pass#1")
	dir := t.TempDir()
	conf := filepath.Join(dir, "cloud_config")
	body := fmt.Sprintf("[Global]\nuser = \"k8s-vcp@vsphere.local\"\npassword = \"Old-pass#1\"\nport = %s\nca-file = %s\n\n[VirtualCenter %q]\ndatacenters = DC0\n",
		sim.Port, sim.CAFile, sim.Host)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.conf")
	if err := os.WriteFile(broken, []byte("[Global\nuser = x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, "--no-cluster", "--config", conf, "-o", "json")
	if r.code != 0 || len(r.report.Credentials) != 1 || r.report.Credentials[0].Test.Verdict != "valid" {
		t.Fatalf("before rotation: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	sim.SetPassword("New-pass#2")
	r = run(t, "--no-cluster", "--config", conf, "-o", "json")
	if r.code != 1 || !r.has("cloud-credential-rejected") {
		t.Fatalf("after rotation: exit %d, want 1 and cloud-credential-rejected: %s", r.code, r.stdout)
	}
	c := r.report.Credentials[0]
	if c.Test.Fault != "InvalidLogin" || c.Source.Path != conf || !strings.Contains(c.Action, "update file "+conf) || !strings.Contains(c.Action, "restart") {
		t.Fatalf("credential: %+v", c)
	}
	if strings.Contains(r.stdout+r.stderr, "Old-pass#1") {
		t.Fatal("the password was printed")
	}
	// A malformed file next to it: a one-line error naming it, exit 2 when nothing worse, the other file still checked.
	r = run(t, "--no-cluster", "--no-login", "--config", conf, "--config", broken, "-o", "json")
	if r.code != 2 || !strings.Contains(r.stderr, broken) || len(r.report.Credentials) != 1 {
		t.Fatalf("broken file: exit %d, stderr %s, stdout %s", r.code, r.stderr, r.stdout)
	}
	// The table names the file and the verdict.
	r = run(t, "--no-cluster", "--config", conf)
	if r.code != 1 || !strings.Contains(r.stdout, "rejected (InvalidLogin)") || !strings.Contains(r.stdout, conf) {
		t.Fatalf("table: exit %d\n%s", r.code, r.stdout)
	}
}

// TestBadConfigLogs: an unparsable --config (exit 2) is a failing "inputs" case in JUnit and a
// failed invocation in SARIF, never a passing case and an empty log.
func TestBadConfigLogs(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "cloud.conf")
	if err := os.WriteFile(bad, []byte("[Global\nuser = \"unterminated\n\x00\x01"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"junit", "sarif"} {
		t.Run(o, func(t *testing.T) {
			r := run(t, "--no-cluster", "--no-login", "--no-host-processes", "--config", bad, "-o", o)
			if r.code != cli.ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, cli.ExitUsage, r.stderr)
			}
			if o == "junit" && !strings.Contains(r.stdout, `type="bad-input"`) {
				t.Errorf("no failing inputs case:\n%s", r.stdout)
			}
			cmdtest.FailedRun(t, r.stdout, cli.ExitUsage, "cloud.conf")
		})
	}
}

// TestInterruptedLogin cancels the context, as the first SIGINT does, while a vCenter login waits
// on a server that accepts and never answers: the run is not a pass, it exits 130.
func TestInterruptedLogin(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn // held open, never answered
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	conf := filepath.Join(t.TempDir(), "vsphere.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`global:
  port: %s
  insecureFlag: true
vcenter:
  lab:
    server: 127.0.0.1
    user: u@vsphere.local
    password: pw
`, port)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmdtest.Interrupt(t, cloud.NewCommand, nil, "--no-cluster", "--no-host-processes", "--config", conf, "-o", "json")
}

func TestExitFor(t *testing.T) {
	t.Parallel()
	errF := finding.New("member-key-drift", "x")
	tests := []struct {
		name   string
		r      pkgcloud.Report
		failOn catalogue.Severity
		want   int
	}{
		{"clean", pkgcloud.Report{}, catalogue.Error, cli.ExitOK},
		{"error at error", pkgcloud.Report{Findings: []finding.Finding{errF}}, catalogue.Error, cli.ExitFindings},
		{"error with fail-on none", pkgcloud.Report{Findings: []finding.Finding{errF}}, catalogue.None, cli.ExitOK},
		{"bad --config with fail-on none", pkgcloud.Report{Findings: []finding.Finding{errF}, BadInput: true}, catalogue.None, cli.ExitUsage},
		{"partial with fail-on none", pkgcloud.Report{Findings: []finding.Finding{errF}, Inventory: pkgcloud.Inventory{Partial: true}}, catalogue.None, cli.ExitUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := cli.Code(cloud.ExitFor(&tt.r, tt.failOn)); got != tt.want {
				t.Errorf("exit %d, want %d", got, tt.want)
			}
		})
	}
}
