// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/pki"
	"github.com/credwatch/credwatch/pkg/lab/signer"
	"github.com/credwatch/credwatch/pkg/lab/tenant"
)

// Scenarios of members that sign through external JWT signers (KEP-740; SignerLab).

// signerRetry is how soon kube-apiserver fetches its signer's keys again after a failed fetch
// (fallbackRefreshDuration, k8s.io/kubernetes pkg/serviceaccount/externaljwt/plugin/keycache.go
// at v1.36.3, line 35).
const signerRetry = 10 * time.Second

// checkFindings runs credwatch check as `credwatch check --create-probe-sa` would on the lab
// (members, trust matrix, each member's /metrics) and returns what it raised at warning or
// above, "ID [member]: message".
func (e *Env) checkFindings(ctx context.Context) []string {
	var urls []string
	for _, m := range e.Lab.Members() {
		urls = append(urls, m.URL)
	}
	snap, err := check.FetchMembers(ctx, check.MembersConfig{Config: check.Config{REST: e.Lab.RESTConfig(), Endpoints: urls,
		CreateProbeSA: true, Timeout: 10 * time.Second}})
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	read := []string{check.SrcMembers, check.SrcMatrix, check.SrcPublicIssuer, check.SrcMetrics}
	var checks []check.Check
	for _, c := range check.Registry() {
		if !slices.ContainsFunc(c.Needs, func(src string) bool { return !slices.Contains(read, src) }) && len(c.Needs) > 0 {
			checks = append(checks, c)
		}
	}
	// check names a member it could not ask by its address; the evidence names it as the lab does.
	byAddr := map[string]string{}
	for _, m := range e.Lab.Members() {
		byAddr[m.Address] = m.Name
	}
	var out []string
	for _, f := range check.Run(snap, checks).Findings {
		if f.Severity.AtLeast(catalogue.Warning) {
			member := f.Member
			if name, ok := byAddr[member]; ok {
				member = name
			}
			out = append(out, fmt.Sprintf("%s [%s]: %s", f.ID, member, f.Message))
		}
	}
	if out == nil {
		out = []string{"no finding at warning or above"}
	}
	return out
}

// memberSigner is the running signer of a member, or an error saying the lab has none.
func (e *Env) memberSigner(member string) (*signer.Signer, error) {
	s, ok := e.Lab.Signer(member)
	if !ok {
		return nil, fmt.Errorf("member %s has no external signer (the lab was started without external signers)", member)
	}
	return s, nil
}

// newSignerKey writes a new key pair under the lab's sa directory and returns its private key.
func (e *Env) newSignerKey(name string) (string, error) {
	key, pub := filepath.Join(e.Lab.Dir(), "sa", name+".key"), filepath.Join(e.Lab.Dir(), "sa", name+".pub")
	return key, pki.NewSAKey(key, pub)
}

// signerKeyDivergence gives the last member's signer another key set to serve and sign with, as
// a signer reading another key store (or an old copy of it) would, and then gives it back the
// shared one.
func signerKeyDivergence(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("signer-key-divergence")
	ev := env.evidence(s)
	names := env.memberNames()
	odd, olds := names[len(names)-1], names[:len(names)-1]
	sg, err := env.memberSigner(odd)
	if err != nil {
		return nil, err
	}
	t, err := env.startTenant(ctx, s.Name, tenant.Options{RefreshEvery: 4 * time.Second})
	if err != nil {
		return nil, err
	}
	defer t.Stop()
	before := env.begin("before: every member's signer serves the shared key", t)
	if err := sleep(ctx, min(env.window()/2, 5*time.Second)); err != nil {
		return nil, err
	}
	ev.Phases = append(ev.Phases, before.end())

	shared := sg.Control()
	key, err := env.newSignerKey(odd + "-signer")
	if err != nil {
		return nil, err
	}
	other := signer.ForKey(key)
	other.RefreshHintSeconds = shared.RefreshHintSeconds
	// What preflight says of the change beforehand: the members' flags with the keys their
	// signers serve, then the odd member's with the key its signer will serve.
	var sharedKeys []string
	for _, k := range shared.Keys {
		sharedKeys = append(sharedKeys, k.File)
	}
	oddMember, _ := env.Lab.Member(odd)
	pred := predictPlanes(ctx, plane{members: env.members(olds), keyFiles: sharedKeys},
		plane{members: []lab.Member{oddMember}, keyFiles: []string{key}}, staticObservable)
	p := env.begin("the signer of "+odd+" serves another key set", t)
	p.role(odd, "its signer serves another key")
	if err := sg.Set(other); err != nil {
		return nil, err
	}
	if err := sleep(ctx, env.window()); err != nil {
		return nil, err
	}
	pod := t.Pods()[0]
	p.probe(env.crossProbe(ctx, pod, odd, olds[0], http.StatusUnauthorized))
	p.probe(env.crossProbe(ctx, pod, olds[0], odd, http.StatusUnauthorized))
	p.probe(env.crossProbe(ctx, pod, olds[0], olds[len(olds)-1], http.StatusCreated))
	pr, trace := env.traceRejected(ctx, pod, odd, olds[0], http.StatusUnauthorized)
	p.probe(pr)
	if trace != "" {
		p.measured["credential trace"] = trace
	}
	ph := predicted(p.end(), pred, []string{odd})
	ph.Findings = env.checkFindings(ctx)
	ev.Phases = append(ev.Phases, ph)
	t.Stop()
	ev.Notes = append(ev.Notes, fmt.Sprintf("The signer of %s served %s (control file %s) instead of the shared %s.", odd, key, sg.ControlFile(), env.Lab.SharedSAKeyFile()))
	if err := sg.Set(shared); err != nil {
		return ev, fmt.Errorf("give %s's signer the shared key back: %w", odd, err)
	}
	// One refresh hint: the member takes the shared key back and the lab is whole again.
	if err := sleep(ctx, time.Duration(shared.RefreshHintSeconds+1)*time.Second); err != nil {
		return ev, err
	}
	return finish(ev), nil
}

// signerStale makes one member's FetchKeys fail, rotates every signer to a new key (keeping the
// old one for verification, as a rotation should), and repairs FetchKeys again.
func signerStale(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("signer-stale")
	ev := env.evidence(s)
	names := env.memberNames()
	stale := names[len(names)/2]
	var others []string
	for _, n := range names {
		if n != stale {
			others = append(others, n)
		}
	}
	signers := map[string]*signer.Signer{}
	original := map[string]signer.Control{}
	for _, n := range names {
		sg, err := env.memberSigner(n)
		if err != nil {
			return nil, err
		}
		signers[n], original[n] = sg, sg.Control()
	}
	hint := time.Duration(original[stale].RefreshHintSeconds) * time.Second
	t, err := env.startTenant(ctx, s.Name, tenant.Options{RefreshEvery: 4 * time.Second})
	if err != nil {
		return nil, err
	}
	defer t.Stop()
	pod := t.Pods()[0]

	// 1. FetchKeys fails on one member: after its refresh hint it keeps the stale set and retries
	// every 10 s; the set is still the current one, so nothing breaks yet.
	p := env.begin("FetchKeys fails on "+stale+"'s signer", t)
	p.role(stale, "its signer's FetchKeys fails")
	if err := signers[stale].Update(func(c *signer.Control) { c.Fail.FetchKeys = "key store unreachable" }); err != nil {
		return nil, err
	}
	if err := sleep(ctx, max(env.window(), 2*hint+signerRetry+2*time.Second)); err != nil {
		return nil, err
	}
	ph := p.end()
	ph.Findings = env.checkFindings(ctx)
	ev.Phases = append(ev.Phases, ph)

	// 2. Every signer rotates to a new key, serving the old one beside it.
	key, err := env.newSignerKey("rotated")
	if err != nil {
		return nil, err
	}
	p = env.begin("the signers rotate to a new key; "+stale+" still cannot fetch it", t)
	p.role(stale, "its signer's FetchKeys fails")
	for _, n := range names {
		err := signers[n].Update(func(c *signer.Control) {
			c.Keys = append([]signer.Key{{File: key}}, original[n].Keys...)
			c.SignKeyFile = key
			now := time.Now().UTC()
			c.DataTimestamp = &now
		})
		if err != nil {
			return nil, err
		}
	}
	// The others take the new set within one hint (at once for a kid they do not know).
	if err := sleep(ctx, max(env.window(), hint+2*time.Second)); err != nil {
		return nil, err
	}
	p.probe(env.crossProbe(ctx, pod, others[0], stale, http.StatusUnauthorized))
	p.probe(env.crossProbe(ctx, pod, stale, others[0], http.StatusCreated))
	p.probe(env.crossProbe(ctx, pod, stale, stale, http.StatusUnauthorized))
	p.probe(env.crossProbe(ctx, pod, others[0], others[len(others)-1], http.StatusCreated))
	ph = p.end()
	ph.Findings = env.checkFindings(ctx)
	ev.Phases = append(ev.Phases, ph)

	// 3. FetchKeys works again: the next retry (at most 10 s later) takes the new set.
	if err := signers[stale].Update(func(c *signer.Control) { c.Fail = signer.Failures{} }); err != nil {
		return nil, err
	}
	if err := sleep(ctx, signerRetry+2*time.Second); err != nil {
		return nil, err
	}
	p = env.begin("after FetchKeys works again on "+stale+"'s signer", t)
	p.role(stale, "its signer's FetchKeys works again")
	if err := sleep(ctx, env.window()/2); err != nil {
		return nil, err
	}
	p.probe(env.crossProbe(ctx, pod, others[0], stale, http.StatusCreated))
	ph = p.end()
	ph.Findings = env.checkFindings(ctx)
	ev.Phases = append(ev.Phases, ph)
	t.Stop()

	for _, n := range names {
		if err := signers[n].Set(original[n]); err != nil {
			return ev, fmt.Errorf("give %s's signer the shared key back: %w", n, err)
		}
	}
	if err := sleep(ctx, hint+time.Second); err != nil {
		return ev, err
	}
	return finish(ev), nil
}
