// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario_test

import (
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab/scenario"
)

// What the real v1.36.3 kube-apiserver logs when it refuses an ID token for an audience its
// configuration lacks (k8s.io/apiserver plugin/pkg/authenticator/token/oidc/oidc.go line 872
// wrapping github.com/coreos/go-oidc/v3 verify.go), and when it drops an edit of its file
// (k8s.io/kubernetes pkg/kubeapiserver/options/authentication.go line 800; validation.go).
const (
	msgOIDCAudience  = `oidc: verify token: oidc: expected audience "credwatch-lab" got ["credwatch-lab-v2"]`
	msgOIDCAudience2 = `oidc: verify token: oidc: expected audience "credwatch-lab-v2" got ["credwatch-lab"]`
	msgNotValid      = `"failed to validate authentication config"`
	msgOverlap       = "URL must not overlap with disallowed issuers"
)

func TestIntegrationScenarioAuthn(t *testing.T) {
	runOn(t, scenario.AuthnLab{}.LabOptions(3), onlySteps(t, authnTests), map[string]check{
		"authn-config-drift":          authnConfigDriftCheck,
		"jwt-issuer-jwks-unreachable": jwksUnreachableCheck,
	})
}

// authnLogged asserts that member m logged of its authentication configuration a line holding
// every part.
func authnLogged(t *testing.T, m scenario.MemberEvidence, parts ...string) {
	t.Helper()
	messageLogged(t, m.Name, "authentication-config", m.AuthnConfigMessages, parts...)
}

// authLogged asserts that member m logged an "Unable to authenticate the request" err holding part.
func authLogged(t *testing.T, m scenario.MemberEvidence, part string) {
	t.Helper()
	messageLogged(t, m.Name, `"Unable to authenticate the request"`, m.AuthMessages, part)
}

func authnConfigDriftCheck(t *testing.T, ev *scenario.Evidence) {
	noKeyMaterial(t, ev)
	nothingRaised(t, phase(t, ev, "before"))
	p := phase(t, ev, "apiserver-3 runs another")
	probesAsExpected(t, p)
	odd := memberWithRole(t, p, "its file accepts audience")
	authnLogged(t, odd, "reloaded authentication config")
	authLogged(t, odd, msgOIDCAudience2)
	steady, _ := p.Member("apiserver-2")
	authLogged(t, steady, msgOIDCAudience)
	raised(t, p, "authn-config-differs", odd.Name)

	p = phase(t, ev, "an invalid edit")
	probesAsExpected(t, p)
	invalid := memberWithRole(t, p, "its file was edited")
	authnLogged(t, invalid, msgNotValid, msgOverlap)
	raised(t, p, "authn-config-reload-failed", invalid.Name)
	raised(t, p, "authn-config-differs", odd.Name)
}

// msgGetKeys is what a member logs for a token whose kid it lacks while the issuer's JWKS
// answers 503 (github.com/coreos/go-oidc/v3 jwks.go, wrapped by oidc.go line 872).
const msgGetKeys = "oidc: verify token: failed to verify signature: fetching keys oidc: get keys failed: 503 Service Unavailable key set unavailable"

func jwksUnreachableCheck(t *testing.T, ev *scenario.Evidence) {
	noKeyMaterial(t, ev)
	nothingRaised(t, phase(t, ev, "before"))
	p := phase(t, ev, "the issuer's JWKS answers 503")
	probesAsExpected(t, p)
	for _, m := range p.Members {
		authLogged(t, m, msgGetKeys)
		raised(t, p, "jwt-authenticator-no-keys", m.Name)
	}
	p = phase(t, ev, "a member joins")
	probesAsExpected(t, p)
	joined := memberWithRole(t, p, "joined while the JWKS fails")
	authLogged(t, joined, msgGetKeys)
	raised(t, p, "jwt-authenticator-no-keys", joined.Name)
	for _, f := range p.Findings {
		if strings.HasPrefix(f, "jwt-authenticator-no-keys ["+joined.Name+"]") && !strings.Contains(f, "has no keys") {
			t.Errorf("the joined member's finding does not say it has no keys: %s", f)
		}
	}
	nothingRaised(t, phase(t, ev, "the JWKS answers again"))
}

// nothingRaised asserts that phase p's probes went as expected and credwatch check raised
// nothing at warning or above (a healthy lab with an AuthenticationConfiguration).
func nothingRaised(t *testing.T, p scenario.Phase) {
	t.Helper()
	probesAsExpected(t, p)
	for _, f := range p.Findings {
		if f != "no finding at warning or above" {
			t.Errorf("phase %q raised %s", p.Name, f)
		}
	}
}
