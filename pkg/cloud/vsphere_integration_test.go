package cloud

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// vcsim is an in-process vCenter simulator whose one valid login can be changed, as an admin
// rotating a service account's password would.
type vcsim struct {
	URL    *url.URL
	CAFile string
	mu     sync.Mutex
	user   string
	pass   string
}

func (v *vcsim) setPassword(p string) { v.mu.Lock(); v.pass = p; v.mu.Unlock() }

func startVCSim(t *testing.T, user, pass string) *vcsim {
	t.Helper()
	m := simulator.VPX()
	if err := m.Create(); err != nil {
		t.Fatalf("vcsim model: %v", err)
	}
	m.Service.TLS = new(tls.Config)
	// A non-default Listen user makes SessionManager.Authenticate consult ValidLogin
	// (govmomi v0.52.0 simulator/session_manager.go Authenticate).
	m.Service.Listen = &url.URL{User: url.UserPassword(user, pass)}
	v := &vcsim{user: user, pass: pass}
	m.Service.Context.Map.SessionManager().ValidLogin = func(req *types.Login) bool {
		v.mu.Lock()
		defer v.mu.Unlock()
		return req.UserName == v.user && req.Password == v.pass
	}
	s := m.Service.NewServer()
	t.Cleanup(func() { s.Close(); m.Remove() })
	u := *s.URL
	u.User = nil
	v.URL = &u
	v.CAFile = filepath.Join(t.TempDir(), "vcsim-ca.pem")
	if err := os.WriteFile(v.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestIntegrationVSphereRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: vcsim")
	}
	sim := startVCSim(t, "k8s-vcp@vsphere.local", "old-Passw0rd")
	dir := t.TempDir()
	conf := filepath.Join(dir, "vsphere.conf")
	write := func(extra string) {
		t.Helper()
		body := fmt.Sprintf("[Global]\nuser = \"k8s-vcp@vsphere.local\"\npassword = \"old-Passw0rd\"\nport = \"%s\"\n%s\n[VirtualCenter \"127.0.0.1\"]\ndatacenters = \"DC0\"\n",
			sim.URL.Port(), extra)
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	test := func(o LoginOptions) TestResult {
		t.Helper()
		cfgs, errs := LoadPaths([]string{conf})
		if len(errs) > 0 || len(cfgs) != 1 || len(cfgs[0].Credentials) != 1 {
			t.Fatalf("load %s: %v %+v", conf, errs, cfgs)
		}
		o.Interval = time.Millisecond
		return NewTester(o).Test(ctx, cfgs[0].Credentials[0])
	}

	// The simulator's certificate is self-signed: verified by default, so the login is not tried.
	write("")
	if r := test(LoginOptions{}); r.Verdict != Unreachable || r.Fault != "x509" {
		t.Fatalf("self-signed without ca-file: %+v, want unreachable/x509", r)
	}
	// With the config's ca-file the certificate is verified and the login succeeds.
	write(fmt.Sprintf("ca-file = %q", sim.CAFile))
	r := test(LoginOptions{})
	if r.Verdict != Valid || r.Session != "k8s-vcp@vsphere.local" {
		t.Fatalf("before rotation: %+v, want valid", r)
	}
	// The admin rotates the password; the same file is now rejected with InvalidLogin.
	sim.setPassword("new-Passw0rd")
	r = test(LoginOptions{})
	if r.Verdict != Rejected || r.Fault != "InvalidLogin" {
		t.Fatalf("after rotation: %+v, want rejected/InvalidLogin", r)
	}
	t.Logf("rejected: %s", r.Detail)
	// --insecure-skip-tls-verify for vsphere works without the ca-file.
	write("")
	if r := test(LoginOptions{Insecure: map[Provider]bool{VSphere: true}}); r.Verdict != Rejected {
		t.Fatalf("insecure after rotation: %+v, want rejected", r)
	}
}

func TestIntegrationVSphereUnreachable(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: network")
	}
	c := Credential{Provider: VSphere, Server: "127.0.0.1", Port: "1", Username: "u"}.WithPassword("p")
	r := NewTester(LoginOptions{Timeout: 3 * time.Second}).Test(context.Background(), c)
	if r.Verdict != Unreachable {
		t.Fatalf("closed port: %+v, want unreachable", r)
	}
}
