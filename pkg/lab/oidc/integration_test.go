// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package oidc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/lab/oidc"
)

// whoAmI presents tok to member's SelfSubjectReview: the username it authenticates as, or the
// error (a 401 when the member refuses the token).
func whoAmI(ctx context.Context, l *lab.Lab, member, tok string) (string, error) {
	rc := l.MemberRESTConfig(member)
	c := &rest.Config{Host: rc.Host, BearerToken: tok, TLSClientConfig: rest.TLSClientConfig{CAData: rc.CAData}}
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return "", err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return r.Status.UserInfo.Username, nil
}

// TestIntegrationAuthenticationConfig starts two v1.36.3 members with an AuthenticationConfiguration
// trusting the lab's OIDC issuer: both accept its ID token; one member's file is edited to
// another audience and it refuses the token; an invalid edit then leaves that configuration
// running.
func TestIntegrationAuthenticationConfig(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 2, OIDC: &lab.OIDCOptions{}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	iss, ok := l.OIDCIssuer()
	if !ok {
		t.Fatal("no OIDC issuer")
	}
	mems := l.Members()
	for _, m := range mems {
		if m.AuthenticationConfigFile == "" || !strings.Contains(strings.Join(m.Args, " "), "--authentication-config="+m.AuthenticationConfigFile) {
			t.Fatalf("%s runs without its --authentication-config: %q", m.Name, m.Args)
		}
	}
	tok, err := iss.Mint(oidc.Claims{Subject: "alice", Audience: []string{lab.DefaultOIDCAudience}})
	if err != nil {
		t.Fatal(err)
	}
	// The authenticators initialise asynchronously (discovery every 10 s until it answers).
	for _, m := range mems {
		var user string
		deadline := time.Now().Add(30 * time.Second)
		for user, err = whoAmI(ctx, l, m.Name, tok); err != nil && time.Now().Before(deadline); user, err = whoAmI(ctx, l, m.Name, tok) {
			time.Sleep(time.Second)
		}
		if err != nil || user != lab.DefaultOIDCUsernamePrefix+"alice" {
			t.Fatalf("%s: user %q, error %v; log:\n%s", m.Name, user, err, l.LogTail(m.Name, 20))
		}
	}
	odd := mems[1].Name
	other, err := l.AuthenticationConfig()
	if err != nil {
		t.Fatal(err)
	}
	other.JWT[0].Issuer.Audiences = []string{"another-audience"}
	if err := l.SetAuthenticationConfig(odd, other); err != nil {
		t.Fatal(err)
	}
	waitLog(t, l, odd, "reloaded authentication config")
	tok2, _ := iss.Mint(oidc.Claims{Subject: "bob", Audience: []string{lab.DefaultOIDCAudience}})
	if _, err := whoAmI(ctx, l, odd, tok2); !apierrors.IsUnauthorized(err) {
		t.Errorf("%s after the edit: %v, want 401", odd, err)
	}
	// One audience: go-oidc's own check answers (github.com/coreos/go-oidc/v3 verify.go), wrapped
	// by kube-apiserver's "oidc: verify token: %v".
	waitLog(t, l, odd, `oidc: verify token: oidc: expected audience \"another-audience\" got [\"credwatch-lab\"]`)
	if user, err := whoAmI(ctx, l, mems[0].Name, tok2); err != nil || user != "oidc:bob" {
		t.Errorf("%s: user %q, error %v", mems[0].Name, user, err)
	}
	if err := l.WriteAuthenticationConfig(odd, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: "+lab.DefaultIssuer+"\n    audiences: [x]\n  claimMappings:\n    username: {claim: sub, prefix: ''}\n")); err != nil {
		t.Fatal(err)
	}
	waitLog(t, l, odd, "URL must not overlap with disallowed issuers")
	tok3, _ := iss.Mint(oidc.Claims{Subject: "carol", Audience: []string{"another-audience"}})
	if user, err := whoAmI(ctx, l, odd, tok3); err != nil || user != "oidc:carol" {
		t.Errorf("%s after an invalid edit: user %q, error %v; it should keep the configuration it ran", odd, user, err)
	}
}

func waitLog(t *testing.T, l *lab.Lab, member, part string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		data, err := l.MemberLog(member)
		if err == nil && strings.Contains(string(data), part) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%s never logged %q; it logged:\n%s", member, part, l.LogTail(member, 30))
}
