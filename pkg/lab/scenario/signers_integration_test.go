// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab/scenario"
	"github.com/credwatch/credwatch/pkg/report"
)

// What the real v1.36.3 kube-apiserver logs of its external signer's keys
// (pkg/serviceaccount/externaljwt/plugin/keycache.go, lines 79, 113 and 123).
const (
	msgStaleSet      = "when syncing supported public keys(Stale set of keys will be supported): while fetching token verification keys: while getting externally supported jwt signing keys: rpc error: code = Unavailable desc = key store unreachable"
	msgSyncFailed    = `"Error while syncing keys" err="while fetching token verification keys: while getting externally supported jwt signing keys: rpc error: code = Unavailable desc = key store unreachable"`
	msgKidNotFound   = "Key id \""
	msgAfterRefresh  = "\" not found after refresh"
	msgNoKeysRefused = "[" + msgBare + ", " + msgNoKeys + "]"
	// pkg/controlplane/apiserver/options: kube-apiserver's first calls to its signer failed.
	msgSetupSigner = "while setting up external-jwt-signer: "
)

func TestIntegrationScenarioSigners(t *testing.T) {
	runOn(t, scenario.SignerLab{}.LabOptions(3), onlySteps(t, signerTests), map[string]check{
		"signer-key-divergence":  signerKeyDivergenceCheck,
		"signer-stale":           signerStaleCheck,
		"signer-down-at-restart": signerDownAtRestartCheck,
	})
}

// signerLogged asserts that member m logged of its signer's keys a line containing every part.
func signerLogged(t *testing.T, m scenario.MemberEvidence, parts ...string) {
	t.Helper()
	messageLogged(t, m.Name, "signer", m.SignerMessages, parts...)
}

// messageLogged asserts that one of msgs (what member logged of what) contains every part.
func messageLogged(t *testing.T, member, what string, msgs []scenario.MessageCount, parts ...string) {
	t.Helper()
	for _, mc := range msgs {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(mc.Message, p)
		}
		if all {
			return
		}
	}
	t.Errorf("%s logged no %s line with %q; it logged %+v", member, what, parts, msgs)
}

// raised asserts that credwatch check raised finding id naming member at the end of phase p.
func raised(t *testing.T, p scenario.Phase, id, member string) {
	t.Helper()
	for _, f := range p.Findings {
		if strings.HasPrefix(f, id+" ["+member+"]: ") {
			return
		}
	}
	t.Errorf("phase %q: credwatch check did not raise %s naming %s; it raised %q", p.Name, id, member, p.Findings)
}

// noKeyMaterial prints the evidence as `-o json` and `-o table` do and asserts no key shows.
func noKeyMaterial(t *testing.T, ev *scenario.Evidence) {
	t.Helper()
	for _, f := range []report.Format{report.JSON, report.Table} {
		var b bytes.Buffer
		if err := report.Print(&b, f, ev); err != nil {
			t.Fatal(err)
		}
		if s := b.String(); strings.Contains(s, "PRIVATE KEY") || strings.Contains(s, "MIIE") || strings.Contains(s, "eyJ") {
			t.Errorf("-o %s shows key material or a token", f)
		}
	}
}

func signerKeyDivergenceCheck(t *testing.T, ev *scenario.Evidence) {
	noKeyMaterial(t, ev)
	quiet(t, phase(t, ev, "before"))
	p := phase(t, ev, "the signer of")
	probesAsExpected(t, p)
	odd := memberWithRole(t, p, "its signer serves another key")
	if odd.Unauthorized == 0 {
		t.Errorf("%s: no 401s of %d requests", odd.Name, odd.Requests)
	}
	logged(t, odd, msgNoKeysRefused)
	signerLogged(t, odd, msgKidNotFound, msgAfterRefresh)
	orig := memberWithRole(t, p, "original")
	logged(t, orig, msgNoKeysRefused)
	signerLogged(t, orig, msgKidNotFound, msgAfterRefresh)
	raised(t, p, "signer-key-sets-differ", odd.Name)
	raised(t, p, "member-key-drift", odd.Name)
	// The audit logs trace the rejected token to the member that minted it.
	if tr := p.Measured["credential trace"]; !strings.Contains(tr, "minted by ["+odd.Name+"]") {
		t.Errorf("credential trace %q: want it minted by %s", tr, odd.Name)
	}
}

func signerStaleCheck(t *testing.T, ev *scenario.Evidence) {
	noKeyMaterial(t, ev)
	p := phase(t, ev, "FetchKeys fails")
	stale := memberWithRole(t, p, "its signer's FetchKeys fails")
	quiet(t, p) // the stale set is still the current one
	signerLogged(t, stale, msgStaleSet)
	raised(t, p, "signer-keys-stale", stale.Name)

	p = phase(t, ev, "the signers rotate")
	probesAsExpected(t, p)
	stale = memberWithRole(t, p, "its signer's FetchKeys fails")
	if stale.Unauthorized == 0 {
		t.Errorf("%s: no 401s of %d requests after the rotation", stale.Name, stale.Requests)
	}
	logged(t, stale, msgNoKeysRefused)
	signerLogged(t, stale, msgSyncFailed)
	for _, m := range p.Members {
		if m.Name != stale.Name && m.Unauthorized != 0 {
			t.Errorf("%s: %d 401s, want none (it fetched the rotated set)", m.Name, m.Unauthorized)
		}
	}
	raised(t, p, "signer-keys-stale", stale.Name)
	raised(t, p, "signer-key-sets-differ", stale.Name)

	p = phase(t, ev, "after FetchKeys works again")
	probesAsExpected(t, p)
	quiet(t, p)
	if len(p.Findings) != 1 || p.Findings[0] != "no finding at warning or above" {
		t.Errorf("%q: credwatch check raised %q, want nothing", p.Name, p.Findings)
	}
}

func signerDownAtRestartCheck(t *testing.T, ev *scenario.Evidence) {
	noKeyMaterial(t, ev)
	p := phase(t, ev, "the signer of")
	probesAsExpected(t, p)
	down := memberWithRole(t, p, "its signer is down")

	p = phase(t, ev, down.Name+" restarts while")
	if !strings.Contains(p.Measured["exit message"], msgSetupSigner) {
		t.Errorf("%s logged no %q at its restart; measured %q", down.Name, msgSetupSigner, p.Measured)
	}
	if got := p.Measured["credwatch logs cause"]; got != "signer-unavailable" {
		t.Errorf("credwatch logs names %q for the exit line, want signer-unavailable", got)
	}
	raised(t, p, "member-unreachable", down.Name)

	p = phase(t, ev, "the signer of "+down.Name+" is back")
	probesAsExpected(t, p)
	quiet(t, p)
}
