// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package cloudtest starts the real cloud endpoints credwatch's tests log in to: govmomi's vCenter
// simulator (vcsim) in-process, and a real Keystone (package keystone) as a child process.
package cloudtest

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	neturl "net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/credwatch/credwatch/pkg/lab/keystone"
)

// VCSim is an in-process vCenter simulator with one valid login that can be changed, as an admin
// rotating a service account's password would.
type VCSim struct {
	Host   string // 127.0.0.1
	Port   string
	CAFile string // PEM of its self-signed certificate
	mu     sync.Mutex
	user   string
	pass   string
}

// SetPassword changes the one valid password.
func (v *VCSim) SetPassword(p string) { v.mu.Lock(); v.pass = p; v.mu.Unlock() }

// StartVCSim starts vcsim (VPX model, TLS) accepting only user/pass; it stops with the test.
func StartVCSim(t testing.TB, user, pass string) *VCSim {
	t.Helper()
	m := simulator.VPX()
	if err := m.Create(); err != nil {
		t.Fatalf("vcsim model: %v", err)
	}
	m.Service.TLS = new(tls.Config)
	// A Listen user other than the default makes SessionManager.Authenticate consult ValidLogin
	// (govmomi v0.52.0 simulator/session_manager.go); it is read on every Login.
	m.Service.Listen = &neturl.URL{User: neturl.UserPassword(user, pass)}
	v := &VCSim{user: user, pass: pass}
	m.Service.Context.Map.SessionManager().ValidLogin = func(req *types.Login) bool {
		v.mu.Lock()
		defer v.mu.Unlock()
		return req.UserName == v.user && req.Password == v.pass
	}
	s := m.Service.NewServer()
	t.Cleanup(func() { s.Close(); m.Remove() })
	v.Host, v.Port = s.URL.Hostname(), s.URL.Port()
	v.CAFile = filepath.Join(t.TempDir(), "vcsim-ca.pem")
	if err := os.WriteFile(v.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return v
}

// Keystone is a real Keystone (package keystone of the lab), with the helpers the tests use.
type Keystone struct{ *keystone.Server }

// StartKeystone starts a Keystone in a temporary directory and stops it with the test. It fails
// (never skips) when the Debian packages are missing: run hack/deps.sh.
func StartKeystone(t testing.TB) *Keystone {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	k, err := keystone.Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Stop(context.Background()); err != nil {
			t.Logf("%v", err)
		}
	})
	t.Logf("keystone ready in %s", time.Since(start).Round(time.Second))
	return &Keystone{k}
}

func (k *Keystone) admin(ctx context.Context, t testing.TB) *gophercloud.ServiceClient {
	t.Helper()
	pc, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: k.URL,
		Username: "admin", Password: k.AdminPassword, DomainID: "default",
		Scope: &gophercloud.AuthScope{ProjectName: "admin", DomainID: "default"}})
	if err != nil {
		t.Fatalf("admin login: %v", err)
	}
	id, err := openstack.NewIdentityV3(pc, gophercloud.EndpointOpts{})
	if err != nil {
		t.Fatalf("identity client: %v", err)
	}
	return id
}

// ServiceToken issues a token for the service user with its current password.
func (k *Keystone) ServiceToken(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pc, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: k.URL,
		Username: k.ServiceUser, Password: k.ServicePassword, DomainID: "default",
		Scope: &gophercloud.AuthScope{ProjectName: k.ServiceProject, DomainID: "default"}})
	if err != nil {
		t.Fatalf("service login: %v", err)
	}
	return pc.Token()
}

// TokenValid asks Keystone (as admin, GET /v3/auth/tokens) whether token is still valid.
func (k *Keystone) TokenValid(t testing.TB, token string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := tokens.Get(ctx, k.admin(ctx, t), token).ExtractToken()
	return err == nil
}

// ResetPassword is what the admin does: PATCH /v3/users/{id} as admin, through gophercloud.
func (k *Keystone) ResetPassword(t testing.TB, newPassword string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := users.Update(ctx, k.admin(ctx, t), k.ServiceUserID, users.UpdateOpts{Password: newPassword}).Extract(); err != nil {
		t.Fatalf("reset password: %v", err)
	}
}
