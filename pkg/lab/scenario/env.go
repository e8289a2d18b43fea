// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/tally"
	"github.com/credwatch/credwatch/pkg/lab/tenant"
	"github.com/credwatch/credwatch/pkg/report"
)

// DefaultWindow is how long a scenario watches the tenants after each change.
const DefaultWindow = 12 * time.Second

// cacheTTL is kube-apiserver's token authentication success cache (--token-success-cache-ttl): a
// token that was accepted keeps being accepted by that member for this long without validation.
const cacheTTL = 10 * time.Second

// Env is what a scenario runs against: a running lab and how long to watch.
type Env struct {
	Lab *lab.Lab
	// Window is how long each phase watches the tenants after its change (default DefaultWindow).
	Window time.Duration
	// Log gets progress lines (nil: discard).
	Log io.Writer
	// CAPI chooses the release and balancer of a Cluster API scenario.
	CAPI CAPIOptions
}

func (e *Env) window() time.Duration {
	if e.Window <= 0 {
		return DefaultWindow
	}
	return e.Window
}

func (e *Env) logf(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, format+"\n", args...)
	}
}

// evidence starts an Evidence for scenario s on the lab's line.
func (e *Env) evidence(s Scenario) *Evidence { return newEvidence(s, e.Lab.Options().Version) }

// newEvidence starts an Evidence for scenario s on kube-apiserver line.
func newEvidence(s Scenario, line string) *Evidence {
	return &Evidence{APIVersion: report.APIVersion, Kind: "ScenarioEvidence", Scenario: s.Name, Summary: s.Summary, Line: line,
		Started: time.Now(), Notes: slices.Clone(s.Notes)}
}

func finish(ev *Evidence) *Evidence {
	ev.Duration = time.Since(ev.Started).Round(100 * time.Millisecond).String()
	return ev
}

// startTenant creates and starts a tenant in namespace ns through the load balancer.
func (e *Env) startTenant(ctx context.Context, ns string, o tenant.Options) (*tenant.Tenant, error) {
	o.Namespace = ns
	o.CA = e.Lab.CA()
	if o.Log == nil {
		o.Log = e.Log
	}
	t, err := tenant.New(e.Lab.RESTConfig(), o)
	if err != nil {
		return nil, err
	}
	if err := t.Start(ctx); err != nil {
		t.Stop()
		return nil, fmt.Errorf("start tenant %s: %w", ns, err)
	}
	return t, nil
}

// memberNames lists the running members.
func (e *Env) memberNames() []string {
	var out []string
	for _, m := range e.Lab.Members() {
		out = append(out, m.Name)
	}
	return out
}

// members returns the running members with these names, in their order.
func (e *Env) members(names []string) []lab.Member {
	var out []lab.Member
	for _, n := range names {
		if m, ok := e.Lab.Member(n); ok {
			out = append(out, m)
		}
	}
	return out
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// phase records one observation window: tenant tallies, and the auth lines each member logged
// after the phase began.
type phase struct {
	env      *Env
	name     string
	start    time.Time
	tenants  []*tenant.Tenant
	order    []string
	base     map[string]int
	roles    map[string]string
	versions map[string]string
	probes   []Probe
	measured map[string]string
	// signerBase and authnBase count each member's signer lines (signerLines) and
	// authentication-configuration lines (authnLines) when the phase began.
	signerBase, authnBase map[string]int
}

// begin starts a phase: tenant tallies are reset and every current member's auth-line count is
// remembered, so the phase reports only what was logged from now on.
func (e *Env) begin(name string, tenants ...*tenant.Tenant) *phase {
	p := &phase{env: e, name: name, start: time.Now(), tenants: tenants, base: map[string]int{}, roles: map[string]string{}, versions: map[string]string{}, measured: map[string]string{}, signerBase: map[string]int{}, authnBase: map[string]int{}}
	for _, t := range tenants {
		t.Reset()
	}
	for _, m := range e.Lab.Members() {
		p.track(m, "original")
	}
	e.logf("scenario: phase %q", name)
	return p
}

// track adds a member that existed when the phase began (or updates its role).
func (p *phase) track(m lab.Member, role string) {
	if _, ok := p.roles[m.Name]; !ok {
		p.order = append(p.order, m.Name)
		lines, _ := p.env.Lab.AuthLines(m.Name)
		p.base[m.Name] = len(lines)
		p.signerBase[m.Name] = len(p.env.signerLines(m.Name))
		p.authnBase[m.Name] = len(p.env.authnLines(m.Name))
	}
	p.roles[m.Name] = role
	if m.Version != "" {
		p.versions[m.Name] = m.Version
	}
}

// added adds a member that joined during the phase: everything it ever logged belongs to the phase.
func (p *phase) added(m lab.Member, role string) {
	if _, ok := p.roles[m.Name]; !ok {
		p.order = append(p.order, m.Name)
		p.base[m.Name] = 0
		p.signerBase[m.Name] = 0
		p.authnBase[m.Name] = 0
	}
	p.roles[m.Name] = role
	p.versions[m.Name] = m.Version
}

// role changes the role of a tracked member.
func (p *phase) role(name, role string) {
	if m, ok := p.env.Lab.Member(name); ok {
		p.track(m, role)
		return
	}
	if _, ok := p.roles[name]; ok {
		p.roles[name] = role
	}
}

func (p *phase) probe(pr Probe) { p.probes = append(p.probes, pr) }

// end closes the phase and collects its evidence.
func (p *phase) end() Phase {
	// kube-apiserver writes its log unbuffered; a short pause lets the last lines land.
	time.Sleep(time.Second)
	var snaps []tally.Snapshot
	for _, t := range p.tenants {
		snaps = append(snaps, t.Snapshot())
	}
	tallies := tally.Merge(snaps...)
	// Members that served requests but were not tracked (should not happen) still show up.
	for _, mt := range tallies.Members {
		if _, ok := p.roles[mt.Member]; !ok && mt.Member != tally.NoResponse {
			p.order = append(p.order, mt.Member)
			p.roles[mt.Member] = "unknown"
		}
	}
	out := Phase{Name: p.name, Window: time.Since(p.start).Round(100 * time.Millisecond).String(), Tenants: tallies, Probes: p.probes}
	if len(p.measured) > 0 {
		out.Measured = p.measured
	}
	for _, name := range p.order {
		lines, _ := p.env.Lab.AuthLines(name)
		if b := p.base[name]; b <= len(lines) {
			lines = lines[b:]
		}
		mt := tallies.Member(name)
		me := MemberEvidence{
			Name: name, Version: p.versions[name], Role: p.roles[name],
			Requests: mt.Requests, Unauthorized: mt.Unauthorized, Statuses: mt.Statuses,
			AuthMessages: countMessages(lines),
		}
		if len(lines) > maxLinesPerMember {
			lines = lines[:maxLinesPerMember]
		}
		me.AuthLines = lines
		if sl := p.env.signerLines(name); p.signerBase[name] <= len(sl) {
			me.SignerMessages = countLines(sl[p.signerBase[name]:])
		}
		if al := p.env.authnLines(name); p.authnBase[name] <= len(al) {
			me.AuthnConfigMessages = countLines(al[p.authnBase[name]:])
		}
		out.Members = append(out.Members, me)
	}
	p.env.logf("scenario: phase %q: %d requests, %d 401", p.name, tallies.Requests, tallies.Unauthorized)
	return out
}

// signerLines are the lines a member logged of its external signer's keys (k8s.io/kubernetes
// pkg/serviceaccount/externaljwt/plugin/keycache.go: the stale set, a kid not found after a
// refresh, a failed sync) and of the signer at start ("while setting up external-jwt-signer").
func (e *Env) signerLines(member string) []string {
	return e.memberLines(member, func(line string) bool {
		return strings.Contains(line, " keycache.go:") || strings.Contains(line, "external-jwt-signer")
	})
}

// authnLines are the lines a member logged of its AuthenticationConfiguration and JWT
// authenticators: its reloads (k8s.io/kubernetes pkg/kubeapiserver/options/authentication.go at
// v1.36.3, lines 775-818: "reloaded authentication config", "failed to load/validate/update
// authentication config") and its authenticators' initialisation (k8s.io/apiserver
// plugin/pkg/authenticator/token/oidc/oidc.go: "oidc authenticator: ...").
func (e *Env) authnLines(member string) []string {
	return e.memberLines(member, func(line string) bool {
		return strings.Contains(line, " oidc.go:") ||
			strings.Contains(line, " authentication.go:") && strings.Contains(line, "authentication config")
	})
}

// memberLines are the lines of a member's log that match.
func (e *Env) memberLines(member string, match func(string) bool) []string {
	data, err := e.Lab.MemberLog(member)
	if err != nil {
		return nil
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		if match(line) {
			out = append(out, strings.TrimRight(line, "\n"))
		}
	}
	return out
}

// crossProbe mints a token for pod through member mintOn and presents it to member presentTo.
func (e *Env) crossProbe(ctx context.Context, pod tenant.Pod, mintOn, presentTo string, expect int) Probe {
	pr := Probe{Name: fmt.Sprintf("token minted by %s presented to %s", mintOn, presentTo), PresentedTo: presentTo, Expect: expect}
	return e.mintAndPresent(ctx, pr, pod, mintOn, 0)
}

// mintAndPresent mints a token for pod through member mintOn and presents it to pr.PresentedTo.
func (e *Env) mintAndPresent(ctx context.Context, pr Probe, pod tenant.Pod, mintOn string, timeout time.Duration) Probe {
	pr, _ = e.mintAndPresentToken(ctx, pr, pod, mintOn, timeout)
	return pr
}

// mintAndPresentToken is mintAndPresent that also returns the token ("" when none was minted).
func (e *Env) mintAndPresentToken(ctx context.Context, pr Probe, pod tenant.Pod, mintOn string, timeout time.Duration) (Probe, string) {
	tok, err := tenant.MintVia(ctx, e.Lab.MemberRESTConfig(mintOn), tenant.MintRequest{
		Namespace: pod.Namespace, ServiceAccount: pod.ServiceAccount,
		Bound: &tenant.Bound{Kind: "Pod", Name: pod.Name, UID: pod.UID},
	})
	pr.MintedBy = tok.MintedBy
	if err != nil {
		pr.Error = err.Error()
		return pr, ""
	}
	return e.present(ctx, pr, tok.Value, pr.PresentedTo, timeout), tok.Value
}

// tenantPhase starts a tenant in the scenario's namespace, begins a phase over it and lets the
// tenant run for lead before returning.
func (e *Env) tenantPhase(ctx context.Context, ns string, o tenant.Options, name string, lead time.Duration) (*tenant.Tenant, *phase, error) {
	t, err := e.startTenant(ctx, ns, o)
	if err != nil {
		return nil, nil, err
	}
	p := e.begin(name, t)
	if err := sleep(ctx, lead); err != nil {
		t.Stop()
		return nil, nil, err
	}
	return t, p, nil
}

// present sends token to one member and fills in the probe's result.
func (e *Env) present(ctx context.Context, pr Probe, token, member string, timeout time.Duration) Probe {
	m, ok := e.Lab.Member(member)
	if !ok {
		pr.Error = fmt.Sprintf("no running member %q", member)
		return pr
	}
	res := tenant.Present(ctx, m.URL, e.Lab.CA(), token, timeout)
	pr.Status, pr.User, pr.Error, pr.Duration = res.Status, res.User, res.Error, res.Duration
	if pr.Error == "" && res.Status != http.StatusCreated && res.Message != "" {
		pr.Error = res.Message
	}
	return pr
}

// removeMember is lab.RemoveMember, retried for up to 30 s while etcd refuses to remove a member
// because another one joined moments ago ("etcdserver: unhealthy cluster": etcd wants every
// remaining voting member connected for a few seconds first, and kubeadm retries the same way).
func (e *Env) removeMember(ctx context.Context, name string, o lab.RemoveOptions) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := e.Lab.RemoveMember(ctx, name, o)
		if err == nil || !strings.Contains(err.Error(), "unhealthy cluster") || time.Now().After(deadline) {
			return err
		}
		e.logf("scenario: removing %s: %v; retrying", name, err)
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
	}
}
