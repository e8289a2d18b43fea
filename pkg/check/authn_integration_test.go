// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/lab/oidc"
	"github.com/credwatch/credwatch/pkg/lab/tenant"
)

// TestIntegrationCheckAuthenticationConfig runs `credwatch check --create-probe-sa` on a lab whose
// three v1.36.3 members read an AuthenticationConfiguration trusting the lab's OIDC issuer, after
// each verified an ID token (so each holds the issuer's JWKS): exit 0, every cell ok, one config
// hash and one key-set hash, nothing raised; then one member's file changes and it is named.
func TestIntegrationCheckAuthenticationConfig(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 3, OIDC: &lab.OIDCOptions{}})
	e := &env{t: t, l: l, pub: newPublicIssuer(t)}
	iss, _ := l.OIDCIssuer()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, m := range l.Members() {
		deadline := time.Now().Add(30 * time.Second)
		for {
			tok, err := iss.Mint(oidc.Claims{Subject: "check", Audience: []string{lab.DefaultOIDCAudience}})
			if err != nil {
				t.Fatal(err)
			}
			res := tenant.Present(ctx, m.URL, l.CA(), tok, 10*time.Second)
			if res.Status == http.StatusCreated {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s refuses the issuer's ID token: %d %s", m.Name, res.Status, res.Message)
			}
			time.Sleep(time.Second)
		}
	}

	t.Run("healthy", func(t *testing.T) {
		out, code := e.command(t, "-o", "json", "--create-probe-sa", "--no-cloud")
		if code != cli.ExitOK {
			t.Errorf("exit code %d, want 0:\n%s", code, out)
		}
		var r struct {
			Members  []check.Member `json:"members"`
			Matrix   *check.Matrix  `json:"matrix"`
			Findings []struct {
				ID       string             `json:"id"`
				Severity catalogue.Severity `json:"severity"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("json output: %v", err)
		}
		allAccepted(t, r.Matrix, 3)
		hashes, keySets := map[string]bool{}, map[string]bool{}
		for _, m := range r.Members {
			a := m.Metrics.Authn
			if a == nil || a.ConfigHash == "" || a.APIServerIDHash == "" || len(a.Issuers) != 1 {
				t.Fatalf("%s: authentication metrics %+v, want a config hash and one issuer", m.Name, a)
			}
			hashes[a.ConfigHash] = true
			for _, j := range a.Issuers {
				keySets[j.KeySetHash] = j.KeySetHash != "" && j.LastSuccess > 0
			}
		}
		if len(hashes) != 1 || len(keySets) != 1 {
			t.Errorf("config hashes %v, key sets %v: want one each", hashes, keySets)
		}
		for _, f := range r.Findings {
			if f.Severity.AtLeast(catalogue.Warning) {
				t.Errorf("a healthy lab with an AuthenticationConfiguration raised %s (%s)", f.ID, f.Severity)
			}
		}
		if strings.Contains(out, "eyJ") || strings.Contains(out, "PRIVATE KEY") {
			t.Error("json output carries a token or key material")
		}
	})

	t.Run("authn-config-differs", func(t *testing.T) {
		c, err := l.AuthenticationConfig()
		if err != nil {
			t.Fatal(err)
		}
		c.JWT[0].Issuer.Audiences = []string{"another-audience"}
		if err := l.SetAuthenticationConfig("apiserver-2", c); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(75 * time.Second)
		for {
			log, _ := l.MemberLog("apiserver-2")
			if strings.Contains(string(log), "reloaded authentication config") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("apiserver-2 did not reload:\n%s", l.LogTail("apiserver-2", 10))
			}
			time.Sleep(250 * time.Millisecond)
		}
		r := e.check(t)
		got := withID(r.Findings, "authn-config-differs")
		if len(got) != 1 || got[0].Member != "apiserver-2" {
			t.Fatalf("authn-config-differs naming apiserver-2: %+v", got)
		}
	})
}
