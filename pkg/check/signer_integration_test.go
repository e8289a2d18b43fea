// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/pki"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/lab/signer"
)

// TestIntegrationCheckExternalSigners runs check on a lab whose three members sign through
// external signers (v1.36.3): all ok with one key set; one signer given another key is named; a
// signer whose FetchKeys fails is named once its member's keys are past their refresh.
func TestIntegrationCheckExternalSigners(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 3, ExternalSigner: true, SignerRefreshHint: 3 * time.Second})
	e := &env{t: t, l: l, pub: newPublicIssuer(t)}

	t.Run("healthy", func(t *testing.T) {
		start := time.Now()
		out, code := e.command(t, "-o", "json", "--create-probe-sa", "--no-cloud")
		t.Logf("check -o json --create-probe-sa took %s", time.Since(start).Round(100*time.Millisecond))
		if code != cli.ExitOK {
			t.Errorf("exit code %d, want 0:\n%s", code, out)
		}
		var r struct {
			Members []check.Member `json:"members"`
			Matrix  *check.Matrix  `json:"matrix"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("json output: %v", err)
		}
		allAccepted(t, r.Matrix, 3)
		for _, m := range r.Members {
			if m.Metrics == nil || m.Metrics.Signer == nil || m.Metrics.Signer.FetchKeys["OK"] == 0 || m.Metrics.Signer.FetchKeysSuccess == 0 {
				t.Errorf("%s: external signer metrics %+v, want FetchKeys OK", m.Name, m.Metrics)
			}
			if m.JWKSMaxAge == nil || *m.JWKSMaxAge > 3 {
				t.Errorf("%s: JWKS max-age %v, want at most the 3-s refresh hint", m.Name, m.JWKSMaxAge)
			}
		}
		if strings.Contains(out, "eyJ") || strings.Contains(out, "PRIVATE KEY") {
			t.Error("json output carries a token or key material")
		}
	})

	t.Run("signer-key-sets-differ", func(t *testing.T) {
		s, _ := l.Signer("apiserver-3")
		before := s.Control()
		key, pub := filepath.Join(l.Dir(), "sa", "other.key"), filepath.Join(l.Dir(), "sa", "other.pub")
		if err := pki.NewSAKey(key, pub); err != nil {
			t.Fatal(err)
		}
		other := signer.ForKey(key)
		other.RefreshHintSeconds = before.RefreshHintSeconds
		if err := s.Set(other); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := s.Set(before); err != nil {
				t.Error(err)
			}
			time.Sleep(4 * time.Second) // one refresh hint: apiserver-3 serves the shared key again
		}()
		time.Sleep(4 * time.Second)
		r := e.check(t)
		got := withID(r.Findings, "signer-key-sets-differ")
		if len(got) != 1 || got[0].Member != "apiserver-3" || got[0].Severity != catalogue.Error {
			t.Fatalf("signer-key-sets-differ naming apiserver-3 at error: %+v", got)
		}
		if kd := withID(r.Findings, "member-key-drift"); len(kd) != 1 || kd[0].Member != "apiserver-3" {
			t.Errorf("member-key-drift naming apiserver-3: %+v", kd)
		}
		for _, other := range []string{"apiserver-1", "apiserver-2"} {
			if c := cellOf(r, "apiserver-3", other); c.Cause != "signing-key-unknown" || !strings.Contains(c.Message, "invalid signature, no keys found") {
				t.Errorf("apiserver-3 -> %s: %+v, want signing-key-unknown (invalid signature, no keys found)", other, c)
			}
		}
		log, _ := l.MemberLog("apiserver-1")
		if !strings.Contains(string(log), "not found after refresh") {
			t.Errorf("apiserver-1 did not log \"Key id ... not found after refresh\"")
		}
	})

	t.Run("signer-keys-stale", func(t *testing.T) {
		s, _ := l.Signer("apiserver-2")
		if err := s.Update(func(c *signer.Control) { c.Fail.FetchKeys = "key store unreachable" }); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := s.Update(func(c *signer.Control) { c.Fail = signer.Failures{} }); err != nil {
				t.Error(err)
			}
		}()
		// The refresh fails 3 s on, then every 10 s: past the retry, with the refresh overdue.
		time.Sleep(16 * time.Second)
		r := e.check(t)
		got := withID(r.Findings, "signer-keys-stale")
		if len(got) != 1 || got[0].Member != "apiserver-2" || !strings.Contains(got[0].Message, "Unavailable") {
			t.Fatalf("signer-keys-stale naming apiserver-2: %+v", got)
		}
		if bad := withID(r.Findings, "member-key-drift"); len(bad) != 0 {
			t.Errorf("the stale set is still the current one, yet: %+v", bad)
		}
		log, _ := l.MemberLog("apiserver-2")
		if !strings.Contains(string(log), "when syncing supported public keys(Stale set of keys will be supported): while fetching token verification keys: while getting externally supported jwt signing keys: rpc error: code = Unavailable desc = key store unreachable") {
			t.Errorf("apiserver-2 did not log the stale set:\n%s", l.LogTail("apiserver-2", 20))
		}
	})
}
