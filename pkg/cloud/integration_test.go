// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/cloud/cloudtest"
)

func loadOne(t *testing.T, path string) cloud.Credential {
	t.Helper()
	cfgs, errs := cloud.LoadPaths([]string{path})
	if len(errs) > 0 || len(cfgs) != 1 || len(cfgs[0].Credentials) != 1 {
		t.Fatalf("load %s: %v %+v", path, errs, cfgs)
	}
	return cfgs[0].Credentials[0]
}

func TestIntegrationVSphereRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: vcsim")
	}
	sim := cloudtest.StartVCSim(t, "k8s-vcp@vsphere.local", "old-Passw0rd")
	conf := filepath.Join(t.TempDir(), "vsphere.conf")
	write := func(extra string) {
		t.Helper()
		body := fmt.Sprintf("[Global]\nuser = \"k8s-vcp@vsphere.local\"\npassword = \"old-Passw0rd\"\nport = \"%s\"\n%s\n[VirtualCenter %q]\ndatacenters = \"DC0\"\n",
			sim.Port, extra, sim.Host)
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	test := func(o cloud.LoginOptions) cloud.TestResult {
		t.Helper()
		o.Interval = time.Millisecond
		return cloud.NewTester(o).Test(context.Background(), loadOne(t, conf))
	}
	// The simulator's certificate is self-signed and verified by default: the login is not tried.
	write("")
	if r := test(cloud.LoginOptions{}); r.Verdict != cloud.Unreachable || r.Fault != "x509" {
		t.Fatalf("self-signed without ca-file: %+v, want unreachable/x509", r)
	}
	// With the config's ca-file the certificate verifies and the login succeeds.
	write(fmt.Sprintf("ca-file = %q", sim.CAFile))
	if r := test(cloud.LoginOptions{}); r.Verdict != cloud.Valid || r.Session != "k8s-vcp@vsphere.local" {
		t.Fatalf("before rotation: %+v, want valid", r)
	}
	// The admin rotates the password: the same file is now rejected, by fault type InvalidLogin.
	sim.SetPassword("new-Passw0rd")
	r := test(cloud.LoginOptions{})
	if r.Verdict != cloud.Rejected || r.Fault != "InvalidLogin" {
		t.Fatalf("after rotation: %+v, want rejected/InvalidLogin", r)
	}
	t.Logf("rejected: %s", r.Detail)
	// --insecure-skip-tls-verify for vsphere works without the ca-file.
	write("")
	if r := test(cloud.LoginOptions{Insecure: map[cloud.Provider]bool{cloud.VSphere: true}}); r.Verdict != cloud.Rejected {
		t.Fatalf("insecure after rotation: %+v, want rejected", r)
	}
}

func TestIntegrationRateLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: vcsim")
	}
	sim := cloudtest.StartVCSim(t, "svc@vsphere.local", "right")
	tester := cloud.NewTester(cloud.LoginOptions{Insecure: map[cloud.Provider]bool{cloud.VSphere: true}, Interval: time.Millisecond})
	cred := func(p string) cloud.Credential {
		return cloud.Credential{Provider: cloud.VSphere, Server: sim.Host, Port: sim.Port, Username: "svc@vsphere.local"}.WithPassword(p)
	}
	ctx := context.Background()
	if r := tester.Test(ctx, cred("wrong-1")); r.Verdict != cloud.Rejected {
		t.Fatalf("first wrong password: %+v", r)
	}
	if r := tester.Test(ctx, cred("wrong-1")); r.Verdict != cloud.Rejected || tester.Attempts() != 1 {
		t.Fatalf("same credential again: %+v after %d attempts, want the cached verdict", r, tester.Attempts())
	}
	if r := tester.Test(ctx, cred("wrong-2")); r.Verdict != cloud.NotTested || !strings.Contains(r.Detail, "lock") {
		t.Fatalf("second wrong password: %+v, want not tested (lockout risk)", r)
	}
	if tester.Attempts() != 1 {
		t.Fatalf("attempts = %d, want 1", tester.Attempts())
	}
}

func TestIntegrationUnreachable(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: network")
	}
	tester := cloud.NewTester(cloud.LoginOptions{Timeout: 3 * time.Second, Interval: time.Millisecond})
	for _, c := range []cloud.Credential{
		{Provider: cloud.VSphere, Server: "127.0.0.1", Port: "1", Username: "u"},
		{Provider: cloud.OpenStack, Server: "http://127.0.0.1:1/v3", Username: "u"},
	} {
		if r := tester.Test(context.Background(), c.WithPassword("p")); r.Verdict != cloud.Unreachable {
			t.Fatalf("%s on a closed port: %+v, want unreachable", c.Provider, r)
		}
	}
}

func TestIntegrationKeystoneRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: real Keystone")
	}
	k := cloudtest.StartKeystone(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "cloud.conf")
	body := fmt.Sprintf("[Global]\nauth-url = %s\nusername = %s\npassword = %q\ntenant-name = %s\ndomain-name = Default\nregion = RegionOne\n\n[LoadBalancer]\nuse-octavia = true\n",
		k.URL, k.ServiceUser, k.ServicePassword, k.ServiceProject)
	clouds := filepath.Join(dir, "clouds.yaml")
	yml := fmt.Sprintf("clouds:\n  openstack:\n    auth:\n      auth_url: %s\n      username: %s\n      password: %q\n      project_name: %s\n      user_domain_name: Default\n      project_domain_name: Default\n    region_name: RegionOne\n",
		k.URL, k.ServiceUser, k.ServicePassword, k.ServiceProject)
	for p, b := range map[string]string{conf: body, clouds: yml} {
		if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	test := func(path string) cloud.TestResult {
		t.Helper()
		return cloud.NewTester(cloud.LoginOptions{Interval: time.Millisecond, Timeout: time.Minute}).Test(context.Background(), loadOne(t, path))
	}
	if r := test(conf); r.Verdict != cloud.Valid {
		t.Fatalf("cloud.conf before rotation: %+v, want valid", r)
	}
	if r := test(clouds); r.Verdict != cloud.Valid {
		t.Fatalf("clouds.yaml before rotation: %+v, want valid", r)
	}
	oldToken := k.ServiceToken(t)
	k.ResetPassword(t, "rotated-"+k.ServicePassword)
	// Measured on Debian's Keystone 22.0.2 with fernet tokens: the reset revokes the user's tokens,
	// so consumers fail at their next call, not when their token expires.
	if k.TokenValid(t, oldToken) {
		t.Errorf("a token issued before the password reset is still valid")
	}
	r := test(conf)
	if r.Verdict != cloud.Rejected || r.Fault != "HTTP 401" {
		t.Fatalf("after rotation: %+v, want rejected with HTTP 401", r)
	}
	if strings.Contains(r.Detail, k.ServicePassword) {
		t.Fatalf("detail carries the password: %s", r.Detail)
	}
	t.Logf("rejected: %s", r.Detail)
	if r := test(clouds); r.Verdict != cloud.Rejected {
		t.Fatalf("clouds.yaml after rotation: %+v, want rejected", r)
	}
	// The whole run: one rejected finding per file, naming the file and what to restart.
	cfgs, errs := cloud.LoadPaths([]string{dir})
	if len(errs) > 0 || len(cfgs) != 2 {
		t.Fatalf("load %s: %v", dir, errs)
	}
	rep := cloud.Judge(cloud.Fetch(context.Background(), cloud.FetchOptions{Configs: cfgs, Login: cloud.LoginOptions{Timeout: time.Minute, Interval: time.Millisecond, MaxFailuresPerAccount: 2}}), "")
	var n int
	for _, f := range rep.Findings {
		if f.ID == "cloud-credential-rejected" {
			n++
			if !strings.Contains(f.Message, dir) || !strings.Contains(f.Message, "restart") || !strings.Contains(f.Message, "HTTP 401") {
				t.Errorf("finding does not name the file, the 401 and the restart: %s", f.Message)
			}
		}
	}
	if n != 2 {
		t.Fatalf("%d rejected findings, want 2: %+v", n, rep.Findings)
	}
}
