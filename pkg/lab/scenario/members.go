// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/tenant"
)

// Scenarios that change the membership: rolls and new members with different credentials.

// roll replaces every member with o while a tenant with fast token refresh runs.
func roll(ctx context.Context, env *Env, s Scenario, o lab.MemberOptions, role string) (*Evidence, error) {
	ev := env.evidence(s)
	t, err := env.startTenant(ctx, s.Name, tenant.Options{RefreshEvery: 3 * time.Second})
	if err != nil {
		return nil, err
	}
	defer t.Stop()
	p := env.begin("roll: every member replaced one by one", t)
	originals := env.Lab.Members()
	var pred Prediction
	var added []string
	// The roll of lab.Roll (add new, remove old etcd member, stop old), with removeMember's retry.
	for _, old := range originals {
		m, err := env.Lab.AddMember(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("roll: replacing %s: %w", old.Name, err)
		}
		if added == nil {
			pred = predictStatic(originals, m)
		}
		added = append(added, m.Name)
		p.added(m, role)
		if err := env.removeMember(ctx, old.Name, lab.RemoveOptions{EtcdFirst: true}); err != nil {
			return nil, fmt.Errorf("roll: removing %s: %w", old.Name, err)
		}
		p.role(old.Name, "removed by the roll")
	}
	if err := sleep(ctx, env.window()/2); err != nil {
		return nil, err
	}
	ev.Phases = append(ev.Phases, predicted(p.end(), pred, added))
	return finish(ev), nil
}

func healthyRoll(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("healthy-roll")
	return roll(ctx, env, s, lab.MemberOptions{}, "added (shared key and issuer)")
}

func mixedVersionRoll(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("mixed-version-roll")
	return roll(ctx, env, s, lab.MemberOptions{Version: lab.DefaultVersion}, "added ("+lab.DefaultVersion+")")
}

// keyDrift adds one member with its own service-account key, as kubeadm or Cluster API do when the
// shared sa.key is missing on a new control-plane machine.
func keyDrift(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("key-drift")
	ev := env.evidence(s)
	olds := env.memberNames()
	t, err := env.startTenant(ctx, s.Name, tenant.Options{RefreshEvery: 4 * time.Second})
	if err != nil {
		return nil, err
	}
	defer t.Stop()
	before := env.begin("before: every member signs and verifies with the shared key", t)
	if err := sleep(ctx, min(env.window()/2, 5*time.Second)); err != nil {
		return nil, err
	}
	ev.Phases = append(ev.Phases, before.end())

	p := env.begin("a new member with its own service-account key is in the load balancer", t)
	m, err := env.Lab.AddMember(ctx, lab.MemberOptions{SAKey: lab.SAKeyNew})
	if err != nil {
		return nil, err
	}
	pred := predictStatic(env.members(olds), m)
	p.added(m, "added (own SA key)")
	if err := sleep(ctx, env.window()); err != nil {
		return nil, err
	}
	pod := t.Pods()[0]
	p.probe(env.crossProbe(ctx, pod, olds[0], m.Name, http.StatusUnauthorized))
	p.probe(env.crossProbe(ctx, pod, m.Name, olds[0], http.StatusUnauthorized))
	p.probe(env.crossProbe(ctx, pod, olds[0], olds[len(olds)-1], http.StatusCreated))
	ev.Phases = append(ev.Phases, predicted(p.end(), pred, []string{m.Name}))
	t.Stop()
	ev.Notes = append(ev.Notes,
		fmt.Sprintf("%s signs with %s and verifies only with its own public key; the others verify only with the shared key.", m.Name, m.SAKeyFile))
	if err := env.removeMember(ctx, m.Name, lab.RemoveOptions{}); err != nil {
		return ev, fmt.Errorf("remove %s after the scenario: %w", m.Name, err)
	}
	return finish(ev), nil
}

// issuerChange adds a member whose first issuer differs: first without the old issuer, then with
// it kept as second issuer.
func issuerChange(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("issuer-change")
	ev := env.evidence(s)
	olds := env.memberNames()
	oldIssuers := env.Lab.Options().Issuers
	const newIssuer = "https://issuer.credwatch.example"
	// Kubelet-like refresh: the tokens in use were minted before the change, by original members.
	t, err := env.startTenant(ctx, s.Name, tenant.Options{})
	if err != nil {
		return nil, err
	}
	defer t.Stop()
	pod := t.Pods()[0]
	cases := []struct {
		phase, role string
		issuers     []string
		oldOnNew    int // a token minted by an original member, presented to the new one
	}{
		{"old issuer not kept: the new member accepts only " + newIssuer, "added (issuer " + newIssuer + " only)", []string{newIssuer}, http.StatusUnauthorized},
		{"old issuer kept as second issuer", "added (issuers " + newIssuer + ", " + strings.Join(oldIssuers, ", ") + ")", append([]string{newIssuer}, oldIssuers...), http.StatusCreated},
	}
	for _, c := range cases {
		p := env.begin(c.phase, t)
		m, err := env.Lab.AddMember(ctx, lab.MemberOptions{Issuers: c.issuers})
		if err != nil {
			return nil, err
		}
		pred := predictStatic(env.members(olds), m)
		p.added(m, c.role)
		if err := sleep(ctx, env.window()); err != nil {
			return nil, err
		}
		p.probe(env.crossProbe(ctx, pod, olds[0], m.Name, c.oldOnNew))
		p.probe(env.crossProbe(ctx, pod, m.Name, olds[0], http.StatusUnauthorized))
		ev.Phases = append(ev.Phases, predicted(p.end(), pred, []string{m.Name}))
		if err := env.removeMember(ctx, m.Name, lab.RemoveOptions{}); err != nil {
			return ev, fmt.Errorf("remove %s: %w", m.Name, err)
		}
	}
	return finish(ev), nil
}

// audienceChange adds a member with its own --api-audiences.
func audienceChange(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("audience-change")
	ev := env.evidence(s)
	olds := env.memberNames()
	const aud = "https://audience.credwatch.example"
	t, err := env.startTenant(ctx, s.Name, tenant.Options{})
	if err != nil {
		return nil, err
	}
	defer t.Stop()
	p := env.begin("a new member with --api-audiences="+aud, t)
	m, err := env.Lab.AddMember(ctx, lab.MemberOptions{APIAudiences: []string{aud}})
	if err != nil {
		return nil, err
	}
	pred := predictStatic(env.members(olds), m)
	p.added(m, "added (api audiences "+aud+")")
	if err := sleep(ctx, env.window()); err != nil {
		return nil, err
	}
	pod := t.Pods()[0]
	p.probe(env.crossProbe(ctx, pod, olds[0], m.Name, http.StatusUnauthorized))
	p.probe(env.crossProbe(ctx, pod, m.Name, olds[0], http.StatusUnauthorized))
	ev.Phases = append(ev.Phases, predicted(p.end(), pred, []string{m.Name}))
	t.Stop()
	if err := env.removeMember(ctx, m.Name, lab.RemoveOptions{}); err != nil {
		return ev, fmt.Errorf("remove %s: %w", m.Name, err)
	}
	return finish(ev), nil
}
