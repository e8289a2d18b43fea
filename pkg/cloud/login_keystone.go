// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// KeystoneV3URL is the identity v3 endpoint of an auth URL: ".../v3/" (appended when the URL is
// unversioned; a "/v2.0" URL is replaced, since Keystone v2 is gone).
func KeystoneV3URL(authURL string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(authURL))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("auth-url %q: want http(s)://host[:port][/v3]", authURL)
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/v3"):
	case strings.HasSuffix(p, "/v2.0"):
		p = strings.TrimSuffix(p, "/v2.0") + "/v3"
	default:
		p += "/v3"
	}
	u.Path = p + "/"
	u.User, u.RawQuery, u.Fragment, u.RawFragment, u.RawPath, u.ForceQuery = nil, "", "", "", "", false
	return u.String(), nil
}

// testKeystone asks Keystone v3 for a token with c (POST /v3/auth/tokens) and does nothing else.
// A 401 is the provider's rejection (gophercloud v2's ErrUnexpectedResponseCode).
func (t *Tester) testKeystone(ctx context.Context, c Credential) TestResult {
	endpoint, err := KeystoneV3URL(c.Server)
	if err != nil {
		return TestResult{Verdict: NotTested, Detail: err.Error()}
	}
	tc, err := t.tlsConfig(c)
	if err != nil {
		return TestResult{Verdict: NotTested, Detail: err.Error()}
	}
	pc, err := openstack.NewClient(endpoint)
	if err != nil {
		return TestResult{Verdict: NotTested, Detail: fmt.Sprintf("auth-url %s: %v", c.Server, err)}
	}
	pc.HTTPClient = *httpClient(tc, t.o.Timeout)
	pc.UserAgent.Prepend("credwatch")
	sc := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: endpoint}
	opts := tokens.AuthOptions{
		IdentityEndpoint: endpoint,
		Username:         c.Username,
		UserID:           c.UserID,
		Password:         c.Password(),
		DomainID:         c.UserDomainID,
		DomainName:       c.UserDomainName,
	}
	if c.AppCredentialID != "" || c.AppCredentialName != "" {
		opts = tokens.AuthOptions{IdentityEndpoint: endpoint, ApplicationCredentialID: c.AppCredentialID,
			ApplicationCredentialName: c.AppCredentialName, ApplicationCredentialSecret: c.Password(),
			Username: c.Username, UserID: c.UserID, DomainID: c.UserDomainID, DomainName: c.UserDomainName}
	} else if opts.UserID == "" && opts.DomainID == "" && opts.DomainName == "" {
		opts.DomainID = "default" // in-tree and OCCM fall back to the default domain too
	}
	switch {
	case c.AppCredentialID != "" || c.AppCredentialName != "":
	case c.ProjectID != "":
		opts.Scope = tokens.Scope{ProjectID: c.ProjectID}
	case c.ProjectName != "":
		opts.Scope = tokens.Scope{ProjectName: c.ProjectName, DomainID: c.ProjectDomainID, DomainName: c.ProjectDomainName}
		if opts.Scope.DomainID == "" && opts.Scope.DomainName == "" {
			opts.Scope.DomainID = "default"
		}
	}
	res := tokens.Create(ctx, sc, &opts)
	tok, err := res.ExtractToken()
	if err == nil {
		r := TestResult{Verdict: Valid}
		if tok != nil {
			r.Session = c.Account()
		}
		return r
	}
	var ue gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &ue) {
		switch ue.Actual {
		case http.StatusUnauthorized:
			return TestResult{Verdict: Rejected, Fault: "HTTP 401", Detail: keystoneMessage(ue, c.Password())}
		case http.StatusForbidden, http.StatusNotFound, http.StatusBadRequest:
			// 403: e.g. no role on the project; 404: unknown project or domain. The password was not the problem,
			// but the consumer cannot work with this configuration either.
			return TestResult{Verdict: Rejected, Fault: fmt.Sprintf("HTTP %d", ue.Actual), Detail: keystoneMessage(ue, c.Password())}
		}
		return TestResult{Verdict: Unreachable, Fault: fmt.Sprintf("HTTP %d", ue.Actual), Detail: keystoneMessage(ue, c.Password())}
	}
	return classifyTransport(fmt.Errorf("keystone %s: %w", endpoint, err), endpoint)
}

// keystoneMessage is gophercloud's error line, with the body redacted (also of password, which
// Keystone may echo) and shortened.
func keystoneMessage(e gophercloud.ErrUnexpectedResponseCode, password string) string {
	body := strings.TrimSpace(string(e.Body))
	e.Body = []byte(truncate(body, 300, password))
	return e.Error()
}
