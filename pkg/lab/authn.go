// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/credwatch/credwatch/pkg/kubever"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/apiserver"
	"github.com/credwatch/credwatch/pkg/lab/oidc"
)

// Structured authentication (KEP-3331) in the lab: Options.OIDC starts the lab's OIDC issuer and
// gives every member an AuthenticationConfiguration file trusting it; a scenario edits a member's
// file (SetAuthenticationConfig, WriteAuthenticationConfig) and the member reloads it.

// Defaults of OIDCOptions.
const (
	DefaultOIDCAudience       = "credwatch-lab"
	DefaultOIDCUsernamePrefix = "oidc:"
)

// authnConfigSince is the first line that reads apiserver.config.k8s.io/v1
// AuthenticationConfiguration (StructuredAuthenticationConfiguration GA, k8s.io/apiserver
// pkg/features/kube_features.go at v0.36.3).
var authnConfigSince = kubever.MustParse("v1.34.0")

// OIDCOptions configures the lab's OIDC issuer and the AuthenticationConfiguration every member
// starts with (one JWT authenticator trusting the issuer).
type OIDCOptions struct {
	// Audiences the authenticator accepts (default [DefaultOIDCAudience]).
	Audiences []string `json:"audiences,omitempty"`
	// UsernamePrefix is prepended to the sub claim (default DefaultOIDCUsernamePrefix).
	UsernamePrefix string `json:"usernamePrefix,omitempty"`
}

func (o *OIDCOptions) complete(version string) error {
	if o == nil {
		return nil
	}
	if len(o.Audiences) == 0 {
		o.Audiences = []string{DefaultOIDCAudience}
	}
	if o.UsernamePrefix == "" {
		o.UsernamePrefix = DefaultOIDCUsernamePrefix
	}
	return authnConfigLine(version)
}

// authnConfigLine is nil when version's kube-apiserver reads a v1 AuthenticationConfiguration.
func authnConfigLine(version string) error {
	return lineSince("authentication configuration", version, authnConfigSince, "does not read apiserver.config.k8s.io/v1 (from %s)")
}

// startOIDC starts the issuer on the address clients reach the load balancer on (the lab
// network's gateway, or 127.0.x.1), which every member can reach, with a lab-CA serving
// certificate.
func (l *Lab) startOIDC(ctx context.Context) error {
	if l.o.OIDC == nil {
		return nil
	}
	ip := l.lbIP()
	crt, key, err := l.ca.Issue("credwatch-lab-oidc-issuer", nil, []net.IP{net.ParseIP(ip)}, nil, true)
	if err != nil {
		return fmt.Errorf("oidc issuer: %w", err)
	}
	iss, err := oidc.Start(oidc.Config{Addr: net.JoinHostPort(ip, "0"), CertPEM: crt, KeyPEM: key, Log: l.logf})
	if err != nil {
		return err
	}
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: l.TLSConfig(), DisableKeepAlives: true}}
	wctx, cancel := context.WithTimeout(ctx, l.o.Wait)
	defer cancel()
	if err := iss.WaitServing(wctx, c); err != nil {
		_ = iss.Close()
		return err
	}
	l.mu.Lock()
	l.oidc = iss
	l.mu.Unlock()
	return nil
}

// OIDCIssuer is the lab's OIDC issuer (Options.OIDC), which a scenario mints ID tokens with,
// rotates or takes off the network.
func (l *Lab) OIDCIssuer() (*oidc.Issuer, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.oidc, l.oidc != nil
}

// AuthenticationConfig is the configuration members start with (Options.OIDC): one JWT
// authenticator trusting the lab's issuer.
func (l *Lab) AuthenticationConfig() (apiserver.AuthenticationConfiguration, error) {
	iss, ok := l.OIDCIssuer()
	if !ok {
		return apiserver.AuthenticationConfiguration{}, fmt.Errorf("the lab in %s runs no OIDC issuer (Options.OIDC)", l.o.Dir)
	}
	return apiserver.NewJWTAuthentication(iss.URL(), l.CA(), l.o.OIDC.Audiences, "sub", l.o.OIDC.UsernamePrefix), nil
}

// memberAuthnFile writes the member's AuthenticationConfiguration file, if it has one, and
// returns its path ("" without).
func (l *Lab) memberAuthnFile(name string, o MemberOptions) (string, error) {
	c := o.AuthenticationConfig
	if c == nil {
		if l.o.OIDC == nil {
			return "", nil
		}
		d, err := l.AuthenticationConfig()
		if err != nil {
			return "", err
		}
		c = &d
	}
	if err := authnConfigLine(o.Version); err != nil {
		return "", err
	}
	file := l.path("authn", name+".yaml")
	data, err := c.Marshal()
	if err != nil {
		return "", err
	}
	return file, apiserver.WriteFileAtomic(file, data)
}

// SetAuthenticationConfig replaces a running member's AuthenticationConfiguration file with c;
// the member reloads it within seconds (a file watch; a poll every minute).
func (l *Lab) SetAuthenticationConfig(member string, c apiserver.AuthenticationConfiguration) error {
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	return l.WriteAuthenticationConfig(member, data)
}

// WriteAuthenticationConfig replaces a running member's AuthenticationConfiguration file with
// data as it is (an invalid edit included: the member then keeps the configuration it runs).
func (l *Lab) WriteAuthenticationConfig(member string, data []byte) error {
	m, ok := l.Member(member)
	if !ok {
		return fmt.Errorf("no running member %q", member)
	}
	if m.AuthenticationConfigFile == "" {
		return fmt.Errorf("member %s runs without --authentication-config", member)
	}
	if err := apiserver.WriteFileAtomic(m.AuthenticationConfigFile, slices.Clone(data)); err != nil {
		return fmt.Errorf("%s: %w", member, err)
	}
	l.logf("lab: rewrote %s's authentication configuration %s", member, m.AuthenticationConfigFile)
	return nil
}
