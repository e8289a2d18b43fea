// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/lab/scenario"

	"github.com/credwatch/credwatch/pkg/report"
)

// The exact texts the real kube-apiservers log (reference §2, §11), per line.
const (
	msgNoKeys     = "invalid signature, no keys found"
	msgCrypto130  = "square/go-jose: error in cryptographic primitive"
	msgBare       = "invalid bearer token"
	msgAudience   = `token audiences ["https://kubernetes.default.svc.cluster.local"] is invalid for the target audiences ["https://audience.credwatch.example"]`
	msgInvalid    = "service account token has been invalidated"
	msgNotYet     = "service account token is not valid yet"
	msgExpired    = "service account token has expired"
	msgFuture     = "service account token is issued in the future"
	msgUIDPrefix  = "service account UID ("
	msgUIDPartial = ") does not match claim ("
)

// window is how long each phase watches; short, to keep all lab tests inside their budget.
const window = 8 * time.Second

type check func(t *testing.T, ev *scenario.Evidence)

// runOn runs the named scenarios one after the other on one lab (they leave it usable), each as a
// subtest, and logs its duration and evidence.
func runOn(t *testing.T, o lab.Options, steps []string, checks map[string]check) {
	l := labtest.Start(t, o)
	var predictions []string
	defer func() { writeStaticPredictions(t, o.Version, t.Name(), predictions) }()
	env := &scenario.Env{Lab: l, Window: window, Log: testLog{t}}
	for _, name := range steps {
		s, ok := scenario.Get(name)
		if !ok {
			t.Fatalf("no scenario %q", name)
		}
		ok = t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			start := time.Now()
			ev, err := s.Run(ctx, env)
			t.Logf("scenario %s on %s took %s", name, o.Version, time.Since(start).Round(100*time.Millisecond))
			if ev != nil {
				var b bytes.Buffer
				_ = ev.WriteTable(&b, report.TableOptions{})
				t.Logf("evidence:\n%s", b.String())
			}
			if err != nil {
				t.Fatal(err)
			}
			c, ok := checks[name]
			if !ok {
				t.Fatalf("no check for scenario %s", name)
			}
			c(t, ev)
			predictions = append(predictions, checkStaticPredictions(t, o.Version, ev)...)
		})
		if !ok {
			t.Logf("scenario %s failed; later scenarios on this lab may be affected", name)
		}
	}
}

func TestIntegrationScenarioNewLine(t *testing.T) {
	runOn(t, lab.Options{Members: 2, Version: lab.DefaultVersion},
		onlySteps(t, newLineSteps),
		map[string]check{
			"key-drift":                keyDriftCheck(msgNoKeys),
			"issuer-change":            issuerChangeCheck,
			"audience-change":          audienceChangeCheck,
			"bound-object-deleted":     boundObjectDeletedCheck,
			"serviceaccount-recreated": serviceAccountRecreatedCheck,
			"clock-skew":               clockSkewCheck,
			"healthy-roll":             noUnauthorized,
			"etcd-member-removed":      etcdMemberRemovedCheck,
		})
}

func TestIntegrationScenarioOldLine(t *testing.T) {
	runOn(t, lab.Options{Members: 2, Version: lab.OldVersion},
		onlySteps(t, oldLineSteps),
		map[string]check{
			"key-drift":                keyDriftCheck(msgCrypto130),
			"clock-skew":               clockSkewCheck,
			"serviceaccount-recreated": serviceAccountRecreatedCheck,
			"mixed-version-roll":       noUnauthorized,
		})
}

func phase(t *testing.T, ev *scenario.Evidence, prefix string) scenario.Phase {
	t.Helper()
	for _, p := range ev.Phases {
		if strings.HasPrefix(p.Name, prefix) {
			return p
		}
	}
	t.Fatalf("no phase %q in %s", prefix, ev.Scenario)
	return scenario.Phase{}
}

// memberWithRole returns the member whose role starts with prefix.
func memberWithRole(t *testing.T, p scenario.Phase, prefix string) scenario.MemberEvidence {
	t.Helper()
	for _, m := range p.Members {
		if strings.HasPrefix(m.Role, prefix) {
			return m
		}
	}
	t.Fatalf("phase %q: no member with role %q", p.Name, prefix)
	return scenario.MemberEvidence{}
}

// logged asserts that member m logged err="<want>" (exactly) at least once.
func logged(t *testing.T, m scenario.MemberEvidence, want string) {
	t.Helper()
	for _, mc := range m.AuthMessages {
		if mc.Message == want {
			return
		}
	}
	t.Errorf("%s did not log err=%q; it logged %v", m.Name, want, m.AuthMessages)
}

// quiet asserts that the tenants made requests in phase p and none was rejected.
func quiet(t *testing.T, p scenario.Phase) {
	t.Helper()
	if p.Tenants.Unauthorized != 0 || p.Tenants.Requests == 0 {
		t.Errorf("phase %q: %d requests, %d 401s; want some and none", p.Name, p.Tenants.Requests, p.Tenants.Unauthorized)
	}
}

func probesAsExpected(t *testing.T, p scenario.Phase) {
	t.Helper()
	for _, pr := range p.Probes {
		if pr.Expect != 0 && pr.Status != pr.Expect {
			t.Errorf("probe %q: HTTP %d (%s), want %d", pr.Name, pr.Status, pr.Error, pr.Expect)
		}
	}
}

func noUnauthorized(t *testing.T, ev *scenario.Evidence) {
	for _, p := range ev.Phases {
		if p.Tenants.Requests < 20 {
			t.Errorf("phase %q: only %d tenant requests", p.Name, p.Tenants.Requests)
		}
		if p.Tenants.Unauthorized != 0 {
			t.Errorf("phase %q: %d 401s, want none", p.Name, p.Tenants.Unauthorized)
		}
		for _, m := range p.Members {
			if len(m.AuthMessages) != 0 {
				t.Errorf("%s logged %v", m.Name, m.AuthMessages)
			}
		}
		added := 0
		for _, m := range p.Members {
			if strings.HasPrefix(m.Role, "added") {
				added++
			}
		}
		if added < 2 {
			t.Errorf("phase %q: %d members added, want every member replaced", p.Name, added)
		}
	}
}

func keyDriftCheck(want string) check {
	return func(t *testing.T, ev *scenario.Evidence) {
		quiet(t, phase(t, ev, "before"))
		p := phase(t, ev, "a new member")
		probesAsExpected(t, p)
		drifted := memberWithRole(t, p, "added")
		if drifted.Unauthorized == 0 || drifted.Unauthorized != drifted.Requests-drifted.Statuses[0]-selfMinted(p, drifted.Name) {
			t.Errorf("%s: %d 401s of %d requests (%d with its own tokens); want every request with another member's token rejected", drifted.Name, drifted.Unauthorized, drifted.Requests, selfMinted(p, drifted.Name))
		}
		logged(t, drifted, "["+msgBare+", "+want+"]")
		for _, pr := range p.Tenants.Pairs {
			fromNew, toNew := pr.MintedBy == drifted.Name, pr.ServedBy == drifted.Name
			switch {
			case fromNew != toNew && pr.ServedBy != "(no response)" && pr.Unauthorized != pr.Requests:
				t.Errorf("tokens minted by %s served by %s: %d of %d rejected, want all", pr.MintedBy, pr.ServedBy, pr.Unauthorized, pr.Requests)
			case fromNew == toNew && pr.Unauthorized != 0:
				t.Errorf("tokens minted by %s served by %s: %d rejected, want none", pr.MintedBy, pr.ServedBy, pr.Unauthorized)
			}
		}
		// The original members reject the new member's tokens with the same message.
		orig := memberWithRole(t, p, "original")
		logged(t, orig, "["+msgBare+", "+want+"]")
	}
}

// selfMinted counts the requests member served with tokens it minted itself.
func selfMinted(p scenario.Phase, member string) int {
	for _, pr := range p.Tenants.Pairs {
		if pr.MintedBy == member && pr.ServedBy == member {
			return pr.Requests
		}
	}
	return 0
}

func issuerChangeCheck(t *testing.T, ev *scenario.Evidence) {
	a := phase(t, ev, "old issuer not kept")
	probesAsExpected(t, a)
	m := memberWithRole(t, a, "added")
	if m.Unauthorized == 0 {
		t.Errorf("%s: no 401s with the old issuer dropped", m.Name)
	}
	logged(t, m, msgBare)
	b := phase(t, ev, "old issuer kept")
	probesAsExpected(t, b)
	if b.Tenants.Unauthorized != 0 || b.Tenants.Requests == 0 {
		t.Errorf("old issuer kept: %d 401s of %d requests, want none of some", b.Tenants.Unauthorized, b.Tenants.Requests)
	}
	if m := memberWithRole(t, b, "added"); m.Requests == 0 {
		t.Errorf("old issuer kept: %s served nothing", m.Name)
	}
}

func audienceChangeCheck(t *testing.T, ev *scenario.Evidence) {
	p := ev.Phases[0]
	probesAsExpected(t, p)
	m := memberWithRole(t, p, "added")
	if m.Unauthorized == 0 {
		t.Errorf("%s: no 401s", m.Name)
	}
	logged(t, m, "["+msgBare+", "+msgAudience+"]")
}

func boundObjectDeletedCheck(t *testing.T, ev *scenario.Evidence) {
	p := ev.Phases[0]
	victim := p.Measured["deleted pod"]
	if p.Tenants.Pod(victim).Unauthorized == 0 {
		t.Errorf("deleted pod %s: no 401s", victim)
	}
	for _, pt := range p.Tenants.PerPod {
		if pt.Pod != victim && pt.Unauthorized != 0 {
			t.Errorf("surviving pod %s: %d 401s", pt.Pod, pt.Unauthorized)
		}
	}
	found := false
	for _, m := range p.Members {
		for _, mc := range m.AuthMessages {
			if mc.Message == "["+msgBare+", "+msgInvalid+"]" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no member logged %q: %v", msgInvalid, p.Messages())
	}
}

func serviceAccountRecreatedCheck(t *testing.T, ev *scenario.Evidence) {
	p := ev.Phases[0]
	if p.Tenants.Unauthorized == 0 {
		t.Error("no 401s after the service account was re-created")
	}
	want := fmt.Sprintf("[%s, %s%s%s%s)]", msgBare, msgUIDPrefix, p.Measured["service account UID after"], msgUIDPartial, p.Measured["service account UID before"])
	found := false
	for _, m := range p.Members {
		for _, mc := range m.AuthMessages {
			found = found || mc.Message == want
		}
	}
	if !found {
		t.Errorf("no member logged %q: %v", want, p.Messages())
	}
}

func clockSkewCheck(t *testing.T, ev *scenario.Evidence) {
	p := ev.Phases[0]
	if len(p.Probes) == 0 {
		t.Fatal("no probes")
	}
	probesAsExpected(t, p)
	for _, want := range []string{msgNotYet, msgExpired, msgFuture} {
		for _, m := range p.Members {
			logged(t, m, "["+msgBare+", "+want+"]")
		}
	}
}

// etcdMemberRemovedCheck asserts only that the scenario measured something: what the apiserver
// does is recorded, not presumed.
func etcdMemberRemovedCheck(t *testing.T, ev *scenario.Evidence) {
	p := ev.Phases[0]
	kept := memberWithRole(t, p, "etcd member removed")
	if kept.Requests == 0 {
		t.Errorf("%s served no tenant request in load-balancer mode all", kept.Name)
	}
	if len(p.Probes) != 2 {
		t.Errorf("probes = %d, want 2", len(p.Probes))
	}
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
