// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package mixin_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/apiserver"
	"github.com/credwatch/credwatch/pkg/lab/oidc"
	"github.com/credwatch/credwatch/pkg/lab/signer"
)

// faults are the lab's scenarios as TestIntegrationPrometheusScenarios runs them, each with the
// mixin alerts meant for it.
func faults() []fault {
	const signerHint = 20 * time.Second
	return []fault{
		{name: "healthy-roll", summary: "a member with the shared key joins, then an original one leaves",
			opts: lab.Options{Members: 2}, quiet: true, watcher: true, watch: 11 * time.Minute,
			apply: func(ctx context.Context, t *testing.T, r *faultRun) map[string][]string {
				addMember(ctx, t, r, lab.MemberOptions{})
				sleepCtx(ctx, 90*time.Second)
				if err := r.lab.RemoveMember(ctx, r.memberNames()[0], lab.RemoveOptions{}); err != nil {
					t.Fatalf("remove an original member: %v", err)
				}
				r.retarget(t)
				return nil
			}},
		{name: "key-drift", summary: "a member with its own service-account key joins",
			opts: lab.Options{Members: 2}, watcher: true,
			apply: func(ctx context.Context, t *testing.T, r *faultRun) map[string][]string {
				old := r.memberNames()
				drifted := addMember(ctx, t, r, lab.MemberOptions{SAKey: lab.SAKeyNew})
				all := append(old, drifted)
				return map[string][]string{"CredwatchAPIServerRejectsWhatOthersAccept": {drifted},
					"CredwatchAPIServerAuthFailures": all, "CredwatchAPIServerTokenCacheErrors": all,
					"CredwatchTrustBroken": {drifted}, "CredwatchKeyOrIssuerDrift": {drifted}}
			}},
		{name: "issuer-change", summary: "a member whose only issuer differs joins",
			opts: lab.Options{Members: 2},
			apply: func(ctx context.Context, t *testing.T, r *faultRun) map[string][]string {
				old := r.memberNames()
				changed := addMember(ctx, t, r, lab.MemberOptions{Issuers: []string{"https://issuer-b.credwatch.lab"}})
				return map[string][]string{"CredwatchAPIServerRejectsWhatOthersAccept": {changed},
					"CredwatchAPIServerAuthFailures": append(old, changed)}
			}},
		{name: "bound-object-deleted", summary: "the pod the clients' tokens are bound to is deleted",
			opts: lab.Options{Members: 2},
			apply: func(ctx context.Context, t *testing.T, r *faultRun) map[string][]string {
				pod := createPod(ctx, t, r.lab, r.memberNames()[0], "bound")
				for _, m := range r.memberNames() {
					r.cl.addToken(mintBoundToken(ctx, t, r.lab, m, pod))
				}
				sleepCtx(ctx, 30*time.Second) // the bound tokens accepted for a while
				deletePod(ctx, t, r.lab, pod.Name)
				return map[string][]string{"CredwatchAPIServerAuthFailures": r.memberNames()}
			}},
		{name: "etcd-member-removed", summary: "a member's etcd member is removed, its apiserver kept behind a balancer that sends to every member; tokens of a pod created afterwards",
			opts: lab.Options{Members: 2, LBMode: lab.LBAll}, watch: 12 * time.Minute, watcher: true,
			apply: func(ctx context.Context, t *testing.T, r *faultRun) map[string][]string {
				names := r.memberNames()
				victim, healthy := names[0], names[1]
				if err := r.lab.RemoveMember(ctx, victim, lab.RemoveOptions{EtcdFirst: true, KeepAPIServer: true}); err != nil {
					t.Fatalf("remove %s's etcd member: %v", victim, err)
				}
				pod := createPod(ctx, t, r.lab, healthy, "late")
				r.cl.addToken(mintBoundToken(ctx, t, r.lab, healthy, pod))
				// The mixin has no alert meant for it (the table records what fired); the
				// watcher's probes find the member that answers but is not ready.
				return map[string][]string{"CredwatchMemberUnready": {victim}}
			}},
		{name: "aging-credentials", summary: "clients hold a projected token past its refresh time, a legacy Secret token and a client certificate that expires within a day",
			opts: lab.Options{Members: 2}, watcher: true, audit: true,
			measure: func(t *testing.T, r *faultRun) map[string]string {
				out := map[string]string{}
				for _, kind := range []string{"stale", "legacy"} {
					q := fmt.Sprintf(`sum by (namespace, serviceaccount) (credwatch_serviceaccount_tokens_total{cluster="aging-credentials", kind=%q})`, kind)
					out[q] = r.prom.vector(t, q)
				}
				return out
			},
			apply: func(ctx context.Context, t *testing.T, r *faultRun) map[string][]string {
				pod := createPod(ctx, t, r.lab, r.memberNames()[0], "aging")
				r.cl.addToken(staleToken(t, r.lab, pod))
				r.cl.addToken(legacyToken(ctx, t, r.lab, "aging-legacy"))
				presentCertificate(ctx, t, r.lab, r.cl, 12*time.Hour)
				all := r.memberNames()
				return map[string][]string{"CredwatchAPIServerStaleTokens": all, "CredwatchAPIServerLegacyTokensInUse": all,
					"CredwatchClientCertificateExpiring": all, "CredwatchClientCertificateExpiringSoon": all}
			}},
		{name: "signer-stale", summary: "one member's external signer fails FetchKeys",
			opts: lab.Options{Members: 2, ExternalSigner: true, SignerRefreshHint: signerHint},
			apply: func(ctx context.Context, t *testing.T, r *faultRun) map[string][]string {
				stale := r.memberNames()[1]
				s, ok := r.lab.Signer(stale)
				if !ok {
					t.Fatalf("%s has no signer", stale)
				}
				if err := s.Update(func(c *signer.Control) { c.Fail.FetchKeys = "key store unreachable" }); err != nil {
					t.Fatal(err)
				}
				return map[string][]string{"CredwatchExternalSignerFetchErrors": {stale}, "CredwatchExternalSignerKeysStale": {stale}}
			}},
		{name: "signer-down", summary: "one member's external signer stops; clients keep asking that member for tokens",
			opts: lab.Options{Members: 2, ExternalSigner: true, SignerRefreshHint: signerHint},
			apply: func(ctx context.Context, t *testing.T, r *faultRun) map[string][]string {
				down := r.memberNames()[1]
				if err := r.lab.StopSigner(down); err != nil {
					t.Fatal(err)
				}
				r.cl.goUntil(func() { keepMinting(ctx, r.lab, down, 20*time.Second) })
				return map[string][]string{"CredwatchExternalSignerSignErrors": {down}, "CredwatchExternalSignerFetchErrors": {down}}
			}},
		{name: "authn-config-drift", summary: "one member loads another AuthenticationConfiguration; an invalid edit of the other's is not loaded",
			opts: lab.Options{Members: 2, OIDC: &lab.OIDCOptions{}},
			apply: func(ctx context.Context, t *testing.T, r *faultRun) map[string][]string {
				names := r.memberNames()
				invalid, odd := names[0], names[1]
				base, err := r.lab.AuthenticationConfig()
				if err != nil {
					t.Fatal(err)
				}
				other := base
				other.JWT = append([]apiserver.JWTAuthenticator(nil), base.JWT...)
				other.JWT[0].Issuer.Audiences = []string{"credwatch-lab-v2"}
				bad := other
				bad.JWT = append(append([]apiserver.JWTAuthenticator(nil), other.JWT...), apiserver.JWTAuthenticator{
					Issuer:        apiserver.Issuer{URL: r.lab.Options().Issuers[0], Audiences: []string{"credwatch-lab-v2"}},
					ClaimMappings: other.JWT[0].ClaimMappings,
				})
				writeAuthn(t, r.lab, odd, other)
				writeAuthn(t, r.lab, invalid, bad)
				return map[string][]string{"CredwatchAuthenticationConfigDrift": names, "CredwatchAuthenticationConfigReloadFailed": {invalid}}
			}},
		{name: "jwt-issuer-jwks-unreachable", summary: "both members verified the JWT issuer's tokens; it rotates, one member fetches the new key set, then the JWKS answers 503 to the other",
			opts: lab.Options{Members: 2, OIDC: &lab.OIDCOptions{}},
			apply: func(ctx context.Context, t *testing.T, r *faultRun) map[string][]string {
				names := r.memberNames()
				fresh, stuck := names[0], names[1]
				iss, ok := r.lab.OIDCIssuer()
				if !ok {
					t.Fatal("the lab runs no OIDC issuer")
				}
				// Both members verify an ID token first: a member fetches the JWKS only for a
				// token it must verify, and one that never did exports no key set at all.
				for _, m := range names {
					waitIDToken(ctx, t, r.lab, iss, m, http.StatusOK)
				}
				if err := iss.Rotate(false); err != nil {
					t.Fatal(err)
				}
				waitIDToken(ctx, t, r.lab, iss, fresh, http.StatusOK)
				iss.FailJWKS(http.StatusServiceUnavailable)
				t.Cleanup(func() { iss.FailJWKS(0) })
				r.cl.goUntil(func() { keepPresentingIDTokens(ctx, r.lab, iss, stuck, 30*time.Second) })
				return map[string][]string{"CredwatchJWKSDrift": names, "CredwatchJWTAuthenticatorFetchFailing": {stuck}}
			}},
	}
}

// addMember adds a member, makes Prometheus scrape it and the clients present a token minted
// through it (and to it).
func addMember(ctx context.Context, t *testing.T, r *faultRun, o lab.MemberOptions) string {
	t.Helper()
	m, err := r.lab.AddMember(ctx, o)
	if err != nil {
		t.Fatalf("add a member: %v", err)
	}
	r.retarget(t)
	r.cl.add(m.Name, mintToken(t, r.lab, m.Name))
	return m.Name
}

func writeAuthn(t *testing.T, l *lab.Lab, member string, c apiserver.AuthenticationConfiguration) {
	t.Helper()
	data, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WriteAuthenticationConfig(member, data); err != nil {
		t.Fatal(err)
	}
}

// waitIDToken presents fresh ID tokens of the issuer to member until it answers want (60 s).
func waitIDToken(ctx context.Context, t *testing.T, l *lab.Lab, iss *oidc.Issuer, member string, want int) {
	t.Helper()
	hc := client(l)
	var got int
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && ctx.Err() == nil; sleepCtx(ctx, time.Second) {
		tok, err := iss.Mint(oidc.Claims{Subject: "mixin-user", Audience: []string{lab.DefaultOIDCAudience}})
		if err != nil {
			t.Fatal(err)
		}
		if got = present(hc, l, member, tok); got == want {
			return
		}
	}
	t.Fatalf("%s answered an ID token with %d, want %d", member, got, want)
}

// keepPresentingIDTokens presents a fresh ID token to member every interval until ctx ends.
func keepPresentingIDTokens(ctx context.Context, l *lab.Lab, iss *oidc.Issuer, member string, every time.Duration) {
	hc := client(l)
	for ctx.Err() == nil {
		if tok, err := iss.Mint(oidc.Claims{Subject: "mixin-user", Audience: []string{lab.DefaultOIDCAudience}}); err == nil {
			present(hc, l, member, tok)
		}
		sleepCtx(ctx, every)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
