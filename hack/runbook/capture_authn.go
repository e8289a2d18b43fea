// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/apiserver"
	"github.com/credwatch/credwatch/pkg/lab/oidc"
	"github.com/credwatch/credwatch/pkg/lab/tenant"
)

// captureAuthn is the authnConfig step: a lab of its own, three members reading an
// AuthenticationConfiguration that trusts the lab's OIDC issuer. The third member's file gets a
// second audience (it reloads it), the first member's an edit that does not validate (a JWT
// issuer equal to the service-account issuer; it keeps what it ran). It writes
// check-authn-config.json, the check snapshot then, and authn/apiserver-N.log, what each member
// logged of its configuration and of the ID tokens it refused.
func captureAuthn(ctx context.Context, dir string) (err error) {
	tmp, err := os.MkdirTemp("", "runbook-authn-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	l, err := lab.Up(ctx, lab.Options{Dir: tmp, Members: 3, OIDC: &lab.OIDCOptions{}, Log: os.Stderr})
	if err != nil {
		return fmt.Errorf("authn lab up: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		err = errors.Join(err, l.Down(dctx))
	}()
	mems := l.Members()
	base, err := l.AuthenticationConfig()
	if err != nil {
		return err
	}
	other := base
	other.JWT = []apiserver.JWTAuthenticator{base.JWT[0]}
	other.JWT[0].Issuer.Audiences = []string{"credwatch-lab-v2"}
	if err := l.SetAuthenticationConfig(mems[2].Name, other); err != nil {
		return err
	}
	if err := waitLogged(ctx, l, mems[2].Name, "reloaded authentication config"); err != nil {
		return err
	}
	bad := other
	bad.JWT = append([]apiserver.JWTAuthenticator{other.JWT[0]}, apiserver.JWTAuthenticator{
		Issuer: apiserver.Issuer{URL: lab.DefaultIssuer, Audiences: []string{"credwatch-lab-v2"}}, ClaimMappings: other.JWT[0].ClaimMappings})
	if err := l.SetAuthenticationConfig(mems[0].Name, bad); err != nil {
		return err
	}
	if err := waitLogged(ctx, l, mems[0].Name, "failed to validate authentication config"); err != nil {
		return err
	}
	// An ID token for the first audience, presented to every member: the third refuses it.
	iss, _ := l.OIDCIssuer()
	for _, m := range mems {
		tok, err := iss.Mint(oidc.Claims{Subject: "runbook-user", Audience: []string{lab.DefaultOIDCAudience}})
		if err != nil {
			return err
		}
		res := tenant.Present(ctx, m.URL, l.CA(), tok, 10*time.Second)
		fmt.Fprintf(os.Stderr, "runbook: ID token for %s presented to %s: HTTP %d\n", lab.DefaultOIDCAudience, m.Name, res.Status)
	}
	c := &capturer{l: l, dir: dir}
	if err := c.snapshot(ctx, "check-authn-config.json"); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "authn"), 0o755); err != nil {
		return err
	}
	for _, m := range mems {
		if err := writeAuthnLines(l, m.Name, filepath.Join(dir, "authn", m.Name+".log")); err != nil {
			return err
		}
	}
	return nil
}

// waitLogged waits (up to 75 s: kube-apiserver also polls its file every minute) until member
// logs a line containing part.
func waitLogged(ctx context.Context, l *lab.Lab, member, part string) error {
	deadline := time.Now().Add(75 * time.Second)
	for {
		data, err := l.MemberLog(member)
		if err == nil && strings.Contains(string(data), part) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not log %q:\n%s", member, part, l.LogTail(member, 10))
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
}

// writeAuthnLines writes the member's lines about its authentication configuration and the
// requests it refused to file (no file when it logged none).
func writeAuthnLines(l *lab.Lab, member, file string) error {
	data, err := l.MemberLog(member)
	if err != nil {
		return err
	}
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "authentication config") || strings.Contains(line, "Unable to authenticate the request") || strings.Contains(line, " oidc.go:") {
			b.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if b.Len() == 0 { // nothing to read: no file (logs would call it an input problem)
		if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}
