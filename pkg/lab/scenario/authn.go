// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/apiserver"
	"github.com/credwatch/credwatch/pkg/lab/oidc"
)

// Scenarios of members that authenticate ID tokens through an AuthenticationConfiguration
// (KEP-3331; AuthnLab).

// AuthnLab is a lab whose members read an AuthenticationConfiguration trusting the lab's OIDC
// issuer (lab.Options.OIDC) on lab.DefaultVersion: RunOptions.Members members, at least the
// scenario's Members and 2.
type AuthnLab struct{}

// String is "lab V, AuthenticationConfiguration".
func (AuthnLab) String() string { return "lab " + lab.DefaultVersion + ", AuthenticationConfiguration" }

// StartsOn is lab.DefaultVersion.
func (AuthnLab) StartsOn() string { return lab.DefaultVersion }

// LabOptions are the lab options of the environment for a lab of members.
func (AuthnLab) LabOptions(members int) lab.Options {
	return lab.Options{Version: lab.DefaultVersion, Members: members, OIDC: &lab.OIDCOptions{}}
}

// Run starts the lab, runs s.Run on it and stops it.
func (e AuthnLab) Run(ctx context.Context, s Scenario, o RunOptions) (*Evidence, error) {
	if err := checkLine(s.Name, lab.DefaultVersion, o.Version); err != nil {
		return nil, err
	}
	return runOnLab(ctx, s, o, e.LabOptions(max(o.Members, s.Members, 2)))
}

// authnReloadWait bounds the wait for a member to act on an edit of its file: kube-apiserver
// watches it (fsnotify) and polls it every minute (k8s.io/kubernetes
// pkg/kubeapiserver/options/authentication.go at v1.36.3, line 765).
const authnReloadWait = 75 * time.Second

// Messages a member logs when it acts on an edit of its file (authentication.go, lines 789, 800
// and 818).
const (
	msgAuthnReloaded    = "reloaded authentication config"
	msgAuthnNotValid    = "failed to validate authentication config"
	secondAudience      = "credwatch-lab-v2"
	authnDriftTenantSub = "drift-user"
)

// editAuthn writes data as member's AuthenticationConfiguration and waits until the member logs
// a new line containing want (msgAuthnReloaded, msgAuthnNotValid).
func (e *Env) editAuthn(ctx context.Context, member string, data []byte, want string) error {
	count := func() int {
		n := 0
		for _, l := range e.authnLines(member) {
			if strings.Contains(l, want) {
				n++
			}
		}
		return n
	}
	before := count()
	if err := e.Lab.WriteAuthenticationConfig(member, data); err != nil {
		return err
	}
	deadline := time.Now().Add(authnReloadWait)
	for count() == before {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not log %q within %s of the edit:\n%s", member, want, authnReloadWait, e.Lab.LogTail(member, 10))
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// idTokenProbe mints an ID token for audience and presents it to member.
func (e *Env) idTokenProbe(ctx context.Context, iss *oidc.Issuer, audience, member string, expect int) Probe {
	pr := Probe{Name: fmt.Sprintf("ID token for audience %s presented to %s", audience, member), MintedBy: "oidc-issuer", PresentedTo: member, Expect: expect}
	tok, err := iss.Mint(oidc.Claims{Subject: authnDriftTenantSub, Audience: []string{audience}})
	if err != nil {
		pr.Error = err.Error()
		return pr
	}
	return e.present(ctx, pr, tok, member, 10*time.Second)
}

// waitAccepted presents fresh ID tokens for audience to member until it accepts one: each JWT
// authenticator initialises asynchronously (discovery, retried every 10 s) after the member starts
// or loads a new configuration.
func (e *Env) waitAccepted(ctx context.Context, iss *oidc.Issuer, audience, member string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		pr := e.idTokenProbe(ctx, iss, audience, member, http.StatusCreated)
		if pr.Status == http.StatusCreated {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s refuses ID tokens for %s: HTTP %d %s", member, audience, pr.Status, pr.Error)
		}
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
	}
}

// authnConfigDrift gives the last member another AuthenticationConfiguration (a second audience
// rolled out to it alone), then makes an invalid edit on the first member's file that it silently
// does not load, and puts both files back.
func authnConfigDrift(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("authn-config-drift")
	ev := env.evidence(s)
	names := env.memberNames()
	odd, invalid, steady := names[len(names)-1], names[0], names[len(names)/2]
	iss, ok := env.Lab.OIDCIssuer()
	if !ok {
		return nil, fmt.Errorf("the lab runs no OIDC issuer (start it with an AuthenticationConfiguration)")
	}
	base, err := env.Lab.AuthenticationConfig()
	if err != nil {
		return nil, err
	}
	baseData, err := base.Marshal()
	if err != nil {
		return nil, err
	}
	ph, err := env.authnBefore(ctx, iss, names, "before: every member runs the same AuthenticationConfiguration")
	if err != nil {
		return nil, err
	}
	ev.Phases = append(ev.Phases, ph)

	// 1. The odd member alone gets a configuration accepting another audience.
	other := base
	other.JWT = append([]apiserver.JWTAuthenticator(nil), base.JWT...)
	other.JWT[0].Issuer.Audiences = []string{secondAudience}
	otherData, err := other.Marshal()
	if err != nil {
		return nil, err
	}
	p := env.begin(odd + " runs another AuthenticationConfiguration")
	p.role(odd, "its file accepts audience "+secondAudience+" only")
	if err := env.editAuthn(ctx, odd, otherData, msgAuthnReloaded); err != nil {
		return nil, err
	}
	if err := env.waitAccepted(ctx, iss, secondAudience, odd); err != nil {
		return nil, err
	}
	p.probe(env.idTokenProbe(ctx, iss, lab.DefaultOIDCAudience, odd, http.StatusUnauthorized))
	p.probe(env.idTokenProbe(ctx, iss, lab.DefaultOIDCAudience, steady, http.StatusCreated))
	p.probe(env.idTokenProbe(ctx, iss, secondAudience, odd, http.StatusCreated))
	p.probe(env.idTokenProbe(ctx, iss, secondAudience, steady, http.StatusUnauthorized))
	ph = p.end()
	ph.Findings = env.checkFindings(ctx)
	ev.Phases = append(ev.Phases, ph)

	// 2. An edit of another member's file that does not validate: a second JWT authenticator
	// whose issuer is the cluster's own service-account issuer. The member keeps what it ran.
	bad := other
	bad.JWT = append(append([]apiserver.JWTAuthenticator(nil), other.JWT...), apiserver.JWTAuthenticator{
		Issuer:        apiserver.Issuer{URL: env.Lab.Options().Issuers[0], Audiences: []string{secondAudience}},
		ClaimMappings: other.JWT[0].ClaimMappings,
	})
	badData, err := bad.Marshal()
	if err != nil {
		return nil, err
	}
	// What preflight says of the edit beforehand, from the member's flags and the two files.
	invMember, _ := env.Lab.Member(invalid)
	cfgName := filepath.Base(invMember.AuthenticationConfigFile)
	pred := predictPlanes(ctx, plane{members: []lab.Member{invMember}, docs: map[string][]byte{cfgName: baseData}},
		plane{members: []lab.Member{invMember}, docs: map[string][]byte{cfgName: badData}}, authnObservable)
	p = env.begin("an invalid edit of " + invalid + "'s file is not loaded")
	p.role(odd, "its file accepts audience "+secondAudience+" only")
	p.role(invalid, "its file was edited to audience "+secondAudience+" and the service-account issuer")
	if err := env.editAuthn(ctx, invalid, badData, msgAuthnNotValid); err != nil {
		return nil, err
	}
	p.probe(env.idTokenProbe(ctx, iss, secondAudience, invalid, http.StatusUnauthorized))
	p.probe(env.idTokenProbe(ctx, iss, lab.DefaultOIDCAudience, invalid, http.StatusCreated))
	ph = p.end()
	pred.Observed = authnObserved(ph)
	ph.Prediction = &pred
	ph.Findings = env.checkFindings(ctx)
	ev.Phases = append(ev.Phases, ph)
	ev.Notes = append(ev.Notes, fmt.Sprintf("The lab's OIDC issuer is %s; %s's file is %s.", iss.URL(), odd, memberAuthnFile(env, odd)))

	// Both files back: the lab is whole again.
	for _, n := range []string{odd, invalid} {
		if err := env.editAuthn(ctx, n, baseData, msgAuthnReloaded); err != nil {
			return ev, fmt.Errorf("put %s's AuthenticationConfiguration back: %w", n, err)
		}
	}
	return finish(ev), nil
}

func memberAuthnFile(env *Env, member string) string {
	m, _ := env.Lab.Member(member)
	return m.AuthenticationConfigFile
}

// jwtIssuerJWKSUnreachable makes the issuer's JWKS answer 503 while its discovery document keeps
// answering, rotates the issuer's key, adds a member while the JWKS still fails, and repairs
// the JWKS.
func jwtIssuerJWKSUnreachable(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("jwt-issuer-jwks-unreachable")
	ev := env.evidence(s)
	names := env.memberNames()
	iss, ok := env.Lab.OIDCIssuer()
	if !ok {
		return nil, fmt.Errorf("the lab runs no OIDC issuer (start it with an AuthenticationConfiguration)")
	}
	ph, err := env.authnBefore(ctx, iss, names, "before: every member fetched the issuer's JWKS")
	if err != nil {
		return nil, err
	}
	ev.Phases = append(ev.Phases, ph)

	// 1. The JWKS fails and the issuer rotates: a token with the old key still verifies (each
	// member keeps the set it fetched), one with the new key does not.
	oldTok, err := iss.Mint(oidc.Claims{Subject: authnDriftTenantSub, Audience: []string{lab.DefaultOIDCAudience}, Lifetime: 10 * time.Minute})
	if err != nil {
		return nil, err
	}
	p := env.begin("the issuer's JWKS answers 503 and the issuer rotates its key")
	iss.FailJWKS(http.StatusServiceUnavailable)
	defer iss.FailJWKS(0)
	if err := iss.Rotate(false); err != nil {
		return nil, err
	}
	for _, n := range names {
		p.role(n, "fetched the old key set")
		p.probe(env.idTokenProbe(ctx, iss, lab.DefaultOIDCAudience, n, http.StatusUnauthorized))
	}
	p.probe(env.present(ctx, Probe{Name: "ID token signed with the old key presented to " + names[0], MintedBy: "oidc-issuer", PresentedTo: names[0], Expect: http.StatusCreated}, oldTok, names[0], 10*time.Second))
	ph = p.end()
	ph.Findings = env.checkFindings(ctx)
	ev.Phases = append(ev.Phases, ph)

	// 2. A member that joins now fetches discovery (its authenticator initialises, /readyz
	// passes) but never a key set: it refuses every ID token of the issuer.
	p = env.begin("a member joins while the JWKS answers 503")
	m, err := env.Lab.AddMember(ctx, lab.MemberOptions{})
	if err != nil {
		return nil, err
	}
	p.added(m, "joined while the JWKS fails")
	if err := env.waitInitialized(ctx, m.Name); err != nil {
		return ev, err
	}
	p.probe(env.idTokenProbe(ctx, iss, lab.DefaultOIDCAudience, m.Name, http.StatusUnauthorized))
	p.probe(env.present(ctx, Probe{Name: "ID token signed with the old key presented to " + m.Name, MintedBy: "oidc-issuer", PresentedTo: m.Name, Expect: http.StatusUnauthorized}, oldTok, m.Name, 10*time.Second))
	p.probe(env.present(ctx, Probe{Name: "ID token signed with the old key presented to " + names[0], MintedBy: "oidc-issuer", PresentedTo: names[0], Expect: http.StatusCreated}, oldTok, names[0], 10*time.Second))
	ph = p.end()
	ph.Findings = env.checkFindings(ctx)
	ev.Phases = append(ev.Phases, ph)

	// 3. The JWKS answers again: each member fetches it at the next unknown kid.
	iss.FailJWKS(0)
	p = env.begin("the JWKS answers again")
	for _, n := range append(names, m.Name) {
		p.probe(env.idTokenProbe(ctx, iss, lab.DefaultOIDCAudience, n, http.StatusCreated))
	}
	ph = p.end()
	ph.Findings = env.checkFindings(ctx)
	ev.Phases = append(ev.Phases, ph)
	ev.Notes = append(ev.Notes, fmt.Sprintf("The lab's OIDC issuer is %s; its JWKS is %s%s.", iss.URL(), iss.URL(), oidc.JWKSPath))
	if err := env.removeMember(ctx, m.Name, lab.RemoveOptions{}); err != nil {
		return ev, fmt.Errorf("remove %s again: %w", m.Name, err)
	}
	return finish(ev), nil
}

// waitInitialized waits until a member's JWT authenticator has fetched its issuer's discovery
// document: the member stops answering "is not initialized" for a token of the issuer.
func (e *Env) waitInitialized(ctx context.Context, member string) error {
	iss, _ := e.Lab.OIDCIssuer()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pr := e.idTokenProbe(ctx, iss, lab.DefaultOIDCAudience, member, 0)
		lines, _ := e.Lab.AuthLines(member)
		last := ""
		if len(lines) > 0 {
			last = lines[len(lines)-1]
		}
		if pr.Status != 0 && !strings.Contains(last, "is not initialized") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s's JWT authenticator did not initialise: %s", member, last)
		}
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
	}
}

// authnBefore waits until every member accepts the issuer's ID tokens (its JWT authenticator
// initialised and fetched the JWKS) and records the healthy phase name: an ID token accepted by
// each member, and what credwatch check raised.
func (e *Env) authnBefore(ctx context.Context, iss *oidc.Issuer, names []string, name string) (Phase, error) {
	for _, n := range names {
		if err := e.waitAccepted(ctx, iss, lab.DefaultOIDCAudience, n); err != nil {
			return Phase{}, err
		}
	}
	p := e.begin(name)
	for _, n := range names {
		p.probe(e.idTokenProbe(ctx, iss, lab.DefaultOIDCAudience, n, http.StatusCreated))
	}
	ph := p.end()
	ph.Findings = e.checkFindings(ctx)
	return ph, nil
}
