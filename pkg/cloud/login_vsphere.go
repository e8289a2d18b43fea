// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/credwatch/credwatch/pkg/limits"
)

// VSphereURL is the SDK URL of a vCenter credential: https://server[:port]/sdk. A server that
// already is a URL (the simulator's) is used as it is.
func VSphereURL(c Credential) (*url.URL, error) {
	host := c.Server
	if u, err := url.Parse(c.Server); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		u.User = nil
		if u.Path == "" || u.Path == "/" {
			u.Path = "/sdk"
		}
		return u, nil
	}
	switch {
	case c.Port != "" && c.Port != "443":
		host = net.JoinHostPort(c.Server, c.Port)
	case strings.Contains(c.Server, ":") && net.ParseIP(c.Server) != nil:
		host = "[" + c.Server + "]" // a bare IPv6 address
	}
	u, err := soap.ParseURL(host)
	if err != nil || u == nil {
		return nil, fmt.Errorf("vCenter %q: not a host name or URL", c.Server)
	}
	u.User = nil
	return u, nil
}

// testVSphere logs in through govmomi, reads the session, and logs out. InvalidLogin is decided
// by the SOAP fault's type, never its text (vCenter and vcsim word it differently).
func (t *Tester) testVSphere(ctx context.Context, c Credential) TestResult {
	u, err := VSphereURL(c)
	if err != nil {
		return TestResult{Verdict: NotTested, Detail: err.Error()}
	}
	insecure := t.insecure(c)
	sc := soap.NewClient(u, insecure)
	if !insecure {
		tc, err := t.tlsConfig(c)
		if err != nil {
			return TestResult{Verdict: NotTested, Detail: err.Error()}
		}
		if tc.RootCAs != nil {
			if err := sc.SetRootCAs(c.CAFile); err != nil {
				return TestResult{Verdict: NotTested, Detail: fmt.Sprintf("ca-file %s: %v", c.CAFile, err)}
			}
		}
	}
	sc.Transport = limits.Transport(sc.Transport, limits.Response, 0)
	vc, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return classifyTransport(fmt.Errorf("connect to vCenter %s: %w", u.Host, err), u.Host)
	}
	sm := session.NewManager(vc)
	if err := sm.Login(ctx, url.UserPassword(c.Username, c.Password())); err != nil {
		if fault.Is(err, &types.InvalidLogin{}) {
			return TestResult{Verdict: Rejected, Fault: "InvalidLogin", Detail: err.Error()}
		}
		if fault.Is(err, &types.NotAuthenticated{}) {
			return TestResult{Verdict: Rejected, Fault: "NotAuthenticated", Detail: err.Error()}
		}
		return classifyTransport(fmt.Errorf("log in to vCenter %s: %w", u.Host, err), u.Host)
	}
	r := TestResult{Verdict: Valid}
	if us, err := sm.UserSession(ctx); err == nil && us != nil {
		r.Session = us.UserName
	}
	if err := sm.Logout(ctx); err != nil {
		r.Detail = "login ok; logout failed (the session expires on its own): " + err.Error()
	}
	return r
}
