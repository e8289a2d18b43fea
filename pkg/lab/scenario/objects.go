// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/etcd"
	"github.com/credwatch/credwatch/pkg/lab/tenant"
)

// Scenarios that change objects tokens are bound to, the clocks, or a member's etcd.

// sinceOr formats t - ref, or "never".
func sinceOr(t, ref time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Sub(ref).Round(100 * time.Millisecond).String()
}

// boundObjectDeleted deletes one tenant pod (grace period 0, as no kubelet will confirm it) while
// its token is still used.
func boundObjectDeleted(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("bound-object-deleted")
	ev := env.evidence(s)
	t, p, err := env.tenantPhase(ctx, s.Name, tenant.Options{Pods: 2}, "pod deleted while its token is in use", 3*time.Second)
	if err != nil {
		return nil, err
	}
	defer t.Stop()
	victim, survivor := t.Pods()[0], t.Pods()[1]
	zero := int64(0)
	if err := t.Client().CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		return nil, fmt.Errorf("delete pod %s: %w", victim.Name, err)
	}
	deleted := time.Now()
	if err := sleep(ctx, max(env.window(), cacheTTL+5*time.Second)); err != nil {
		return nil, err
	}
	snap := t.Snapshot()
	p.measured["deleted pod"] = victim.Name
	p.measured["deleted pod: last 2xx after deletion"] = sinceOr(snap.Pod(victim.Name).LastAccepted, deleted)
	p.measured["deleted pod: first 401 after deletion"] = sinceOr(snap.Pod(victim.Name).FirstUnauthorized, deleted)
	p.measured["surviving pod "+survivor.Name+": 401s"] = fmt.Sprint(snap.Pod(survivor.Name).Unauthorized)
	ev.Phases = append(ev.Phases, p.end())
	return finish(ev), nil
}

// serviceAccountRecreated deletes the tenant's service account and creates it again under the same
// name: the tokens carry the old UID.
func serviceAccountRecreated(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("serviceaccount-recreated")
	ev := env.evidence(s)
	t, p, err := env.tenantPhase(ctx, s.Name, tenant.Options{Pods: 1}, "service account deleted and re-created with the same name", 3*time.Second)
	if err != nil {
		return nil, err
	}
	defer t.Stop()
	sas := t.Client().CoreV1().ServiceAccounts(s.Name)
	name := t.Options().ServiceAccount
	old, err := sas.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get service account %s: %w", name, err)
	}
	if err := sas.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return nil, fmt.Errorf("delete service account %s: %w", name, err)
	}
	created, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("re-create service account %s: %w", name, err)
	}
	recreated := time.Now()
	if err := sleep(ctx, max(env.window(), cacheTTL+5*time.Second)); err != nil {
		return nil, err
	}
	snap := t.Snapshot()
	pod := t.Pods()[0].Name
	p.measured["service account UID before"] = string(old.UID)
	p.measured["service account UID after"] = string(created.UID)
	p.measured["last 2xx after re-creation"] = sinceOr(snap.Pod(pod).LastAccepted, recreated)
	p.measured["first 401 after re-creation"] = sinceOr(snap.Pod(pod).FirstUnauthorized, recreated)
	ev.Phases = append(ev.Phases, p.end())
	return finish(ev), nil
}

// clockSkew signs tokens with the lab's shared key the way a member with a skewed clock would and
// presents them to every member that verifies with the shared key.
func clockSkew(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("clock-skew")
	ev := env.evidence(s)
	key, err := sharedSigner(env.Lab.SharedSAKeyFile())
	if err != nil {
		return nil, err
	}
	t, err := tenant.New(env.Lab.RESTConfig(), tenant.Options{Namespace: s.Name, Pods: 1, CA: env.Lab.CA()})
	if err != nil {
		return nil, err
	}
	if err := t.Setup(ctx); err != nil {
		return nil, err
	}
	pod := t.Pods()[0]
	sa, err := t.Client().CoreV1().ServiceAccounts(pod.Namespace).Get(ctx, pod.ServiceAccount, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get service account %s: %w", pod.ServiceAccount, err)
	}
	issuer := env.Lab.Options().Issuers[0]
	p := env.begin("tokens signed with the shared key by a member whose clock is off")
	for _, m := range env.Lab.Members() {
		if m.SAKeyFile != env.Lab.SharedSAKeyFile() || m.Issuers[0] != issuer {
			continue
		}
		for _, sk := range skews {
			tok, err := signSkewed(key, issuer, pod, string(sa.UID), sk, time.Now())
			if err != nil {
				return nil, err
			}
			p.probe(env.present(ctx, Probe{Name: sk.Name + ", presented to " + m.Name, MintedBy: "signed with " + env.Lab.SharedSAKeyFile(), PresentedTo: m.Name, Expect: sk.Expect}, tok, m.Name, 0))
		}
	}
	ev.Phases = append(ev.Phases, p.end())
	return finish(ev), nil
}

// etcdMemberRemoved removes the first member's etcd member but keeps its apiserver running and in a
// load balancer that sends to members that are not ready (mode "all"), as in the window of a
// KubeadmControlPlane scale-down. It measures; it does not presume.
func etcdMemberRemoved(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("etcd-member-removed")
	ev := env.evidence(s)
	names := env.memberNames()
	if len(names) < 2 {
		return nil, fmt.Errorf("needs at least 2 members, the lab has %d", len(names))
	}
	victim, healthy := names[0], names[1]
	prevMode := env.Lab.LBMode()
	env.Lab.SetLBMode(lab.LBAll)
	defer env.Lab.SetLBMode(prevMode)
	t, err := env.startTenant(ctx, s.Name, tenant.Options{Pods: 2})
	if err != nil {
		return nil, err
	}
	defer t.Stop()
	p := env.begin("etcd member of "+victim+" removed; its apiserver kept in the load balancer (mode all)", t)
	if err := env.removeMember(ctx, victim, lab.RemoveOptions{EtcdFirst: true, KeepAPIServer: true}); err != nil {
		return nil, err
	}
	removed := time.Now()
	p.role(victim, "etcd member removed, apiserver kept")

	// A pod created after the removal: the victim's informers never see it, so its token makes the
	// victim look the pod up live, through its own (gone) etcd.
	fresh, err := tenant.New(env.Lab.MemberRESTConfig(healthy), tenant.Options{Namespace: s.Name + "-late", Pods: 1, CA: env.Lab.CA()})
	if err != nil {
		return nil, err
	}
	// When the removed member led etcd, requests through the others time out while a new leader
	// is elected: the (idempotent) setup is tried again for up to 30 s.
	if err := etcd.RetryWhile(ctx, 30*time.Second, time.Minute, fresh.Setup,
		"etcdserver: request timed out", "etcdserver: leader changed"); err != nil {
		return nil, fmt.Errorf("create a pod after the removal through %s: %w", healthy, err)
	}
	newPod, oldPod := fresh.Pods()[0], t.Pods()[0]
	probes := make(chan Probe, 2)
	for _, c := range []struct {
		when string
		pod  tenant.Pod
	}{{"after", newPod}, {"before", oldPod}} {
		go func() {
			pr := Probe{Name: "token for a pod created " + c.when + " the removal, minted by " + healthy + ", presented to " + victim, PresentedTo: victim}
			probes <- env.mintAndPresent(ctx, pr, c.pod, healthy, 90*time.Second)
		}()
	}
	if err := sleep(ctx, env.window()); err != nil {
		return nil, err
	}
	p.measured[victim+" /readyz"] = readyzOf(ctx, env, victim)
	for range 2 {
		select {
		case pr := <-probes:
			p.probe(pr)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	p.measured["observed for"] = time.Since(removed).Round(time.Second).String()
	ev.Phases = append(ev.Phases, p.end())
	t.Stop()
	if err := env.removeMember(ctx, victim, lab.RemoveOptions{}); err != nil {
		return ev, fmt.Errorf("stop %s: %w", victim, err)
	}
	return finish(ev), nil
}

// readyzOf returns the HTTP status of a member's /readyz and its failing checks.
func readyzOf(ctx context.Context, env *Env, name string) string {
	m, ok := env.Lab.Member(name)
	if !ok {
		return "member gone"
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: env.Lab.TLSConfig(), DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.URL+"/readyz?verbose", nil)
	if err != nil {
		return err.Error()
	}
	resp, err := c.Do(req)
	if err != nil {
		return "no response: " + err.Error()
	}
	defer resp.Body.Close()
	var failed []string
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64*1024))
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "[-]") {
			failed = append(failed, strings.TrimPrefix(l, "[-]"))
		}
	}
	out := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if len(failed) > 0 {
		out += "; failing: " + strings.Join(failed, "; ")
	}
	return out
}
