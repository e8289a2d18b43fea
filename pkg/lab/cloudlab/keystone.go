// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	neturl "net/url"
	"strings"
	"sync"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
)

// Keystone is a real Keystone (package keystone, listening on 127.0.0.1) as the lab's
// hosts reach it: through a pass-through on the lab network that counts the token requests
// (POST /v3/auth/tokens) it relays, accepted (201) and rejected (401). Only the cluster's
// consumers (and credwatch) go through it; the administrator's calls go to Keystone directly.
type Keystone struct {
	// URL is the identity endpoint on the lab network (http://<gateway>:<port>/v3).
	URL string

	upstream      *neturl.URL // http://127.0.0.1:<port>/v3
	adminPassword string
	userID        string
	srv           *http.Server
	ln            net.Listener

	mu                 sync.Mutex
	accepted, rejected int
}

// KeystoneAdmin is what the scenario needs of the Keystone the tests start: its endpoint on
// 127.0.0.1, the administrator's password and the service user's ID.
type KeystoneAdmin struct {
	URL, AdminPassword, ServiceUserID string
}

// StartKeystone relays ip:<free port> to the Keystone a describes.
func StartKeystone(ip netip.Addr, a KeystoneAdmin) (*Keystone, error) {
	up, err := neturl.Parse(a.URL)
	if err != nil || up.Host == "" {
		return nil, fmt.Errorf("keystone: endpoint %q is not a URL", a.URL)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		return nil, fmt.Errorf("keystone: listen on the lab network: %w", err)
	}
	k := &Keystone{URL: "http://" + ln.Addr().String() + up.Path, upstream: up, adminPassword: a.AdminPassword, userID: a.ServiceUserID, ln: ln}
	target := &neturl.URL{Scheme: up.Scheme, Host: up.Host}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(r *http.Response) error {
		if r.Request.Method == http.MethodPost && strings.HasSuffix(r.Request.URL.Path, "/auth/tokens") {
			k.mu.Lock()
			switch r.StatusCode {
			case http.StatusCreated:
				k.accepted++
			case http.StatusUnauthorized:
				k.rejected++
			}
			k.mu.Unlock()
		}
		return nil
	}
	k.srv = &http.Server{Handler: rp}
	go func() { _ = k.srv.Serve(ln) }()
	return k, nil
}

// Close stops the relay (not Keystone).
func (k *Keystone) Close() { _ = k.srv.Close() }

// Cloud is "Keystone".
func (k *Keystone) Cloud() string { return "Keystone" }

// Logins are the token requests relayed so far, accepted and rejected.
func (k *Keystone) Logins() (accepted, rejected int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.accepted, k.rejected
}

// Rotate is what the administrator does: PATCH /v3/users/{id} with the new password. Keystone
// revokes the user's tokens when it does (measured: pkg/cloud's TestIntegrationKeystone).
func (k *Keystone) Rotate(ctx context.Context, newPassword string) error {
	c, err := k.admin(ctx)
	if err != nil {
		return err
	}
	if _, err := users.Update(ctx, c, k.userID, users.UpdateOpts{Password: newPassword}).Extract(); err != nil {
		return fmt.Errorf("keystone: reset the service user's password: %w", err)
	}
	return nil
}

// EndSessions ends nothing: Keystone has no sessions, and the password reset has already
// revoked the tokens a consumer holds.
func (k *Keystone) EndSessions(context.Context) (string, error) {
	return "none to end: the password reset revoked the user's tokens", nil
}

func (k *Keystone) admin(ctx context.Context) (*gophercloud.ServiceClient, error) {
	pc, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: k.upstream.String(),
		Username: "admin", Password: k.adminPassword, DomainID: "default",
		Scope: &gophercloud.AuthScope{ProjectName: "admin", DomainID: "default"}})
	if err != nil {
		return nil, fmt.Errorf("keystone: administrator login: %w", err)
	}
	c, err := openstack.NewIdentityV3(pc, gophercloud.EndpointOpts{})
	if err != nil {
		return nil, fmt.Errorf("keystone: identity client: %w", err)
	}
	return c, nil
}
