// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/controller"
	"github.com/credwatch/credwatch/pkg/lab/capi/workload"
	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
	"github.com/credwatch/credwatch/pkg/lab/tally"
	"github.com/credwatch/credwatch/pkg/report"
)

// CAPIOptions choose the Cluster API release and the LabCluster's balancer of a Cluster API
// scenario (RunOptions.CAPI).
type CAPIOptions struct {
	Version        string // capi.V181 (default) or capi.V184
	HealthCheck    string // tcp, tls (default) or https-readyz
	Deregistration string // on-machine-delete (default) or on-drain
	// ProviderInCluster runs the lab provider as a Pod after the move (capilab.Config's; only
	// capi-self-managed-roll moves). Not yet run in the lab.
	ProviderInCluster bool
}

func (o CAPIOptions) complete() CAPIOptions {
	if o.Version == "" {
		o.Version = capi.V181
	}
	if o.HealthCheck == "" {
		o.HealthCheck = string(lb.CheckTLS)
	}
	if o.Deregistration == "" {
		o.Deregistration = string(infra.OnMachineDelete)
	}
	return o
}

// CAPIEvidence is what a Cluster API scenario saw: the roll's phases as the lab timed them, the
// provider's steps, and the window in which the old member was in the balancer with its etcd
// member gone.
type CAPIEvidence struct {
	CAPI           string                `json:"capi"`
	HealthCheck    string                `json:"healthCheck"`
	Deregistration string                `json:"deregistration"`
	Roll           capilab.Roll          `json:"roll"`
	Timeline       []string              `json:"timeline"`
	Window         string                `json:"inRotationAfterEtcdRemoval,omitempty"`
	ControlPlane   *capilab.ControlPlane `json:"controlPlane,omitempty"`
	// SAKeyBefore and SAKeyAfter fingerprint the public key of the <cluster>-sa Secret before
	// the scenario changed it and after the roll (capi-sa-secret-deleted).
	SAKeyBefore string `json:"saKeyBefore,omitempty"`
	SAKeyAfter  string `json:"saKeyAfter,omitempty"`
	// APIServerRuns are the new machines' kube-apiserver container runs (a restart shows as a
	// second run), from their static pods' log files.
	APIServerRuns map[string][]capilab.Run `json:"apiserverRuns,omitempty"`
	// Patched is what the scenario changed in the KubeadmControlPlane before the roll.
	Patched string `json:"patched,omitempty"`
	// Prediction is what credwatch preflight (live mode) said of the roll before it started,
	// and what the roll then showed.
	Prediction Prediction `json:"prediction"`
	// Check is what credwatch check's Cluster API checks said of the management cluster (the
	// KubeadmControlPlane and Machines clusterapi.Reader reads for --capi-cluster) when a roll
	// was blocked: finding IDs and messages.
	Check []string `json:"check,omitempty"`
	// Watch is what credwatch watch raised on the workload cluster, from before the scenario's
	// change to the end of its last phase.
	Watch []WatchEvent `json:"watch,omitempty"`
	// SelfManaged compares the roll made from the management lab with the one the cluster made
	// of itself (capi-self-managed-roll).
	SelfManaged *SelfManagedEvidence `json:"selfManaged,omitempty"`

	events []controller.Event
}

// capiScenario is one Cluster API scenario: a one-machine workload control plane made by the
// real KubeadmControlPlane, rolled 1 → 2 → 1 by spec.rolloutAfter with the tenant's pods calling
// it through the balancer.
type capiScenario struct {
	name string
	// before changes the management cluster before the roll (nil: nothing) and says what it did.
	before func(ctx context.Context, c *capilab.Lab, ce *CAPIEvidence) error
	// after, when set, is how long the tenants go on after the roll: the "after roll" phase.
	after time.Duration
	// selfManaged gives the cluster a worker and platform controllers, rolls it once from the
	// management lab, then moves it into itself before the scenario's roll
	// (capi-self-managed-roll).
	selfManaged bool
}

// capiRoll is the scenario capi-roll: the roll alone.
func capiRoll(ctx context.Context, env *Env) (*Evidence, error) {
	return capiScenario{name: "capi-roll"}.run(ctx, env)
}

// capiSASecretDeleted is the scenario capi-sa-secret-deleted: the <cluster>-sa Secret is
// deleted, then the roll; the new machine signs with a key KubeadmControlPlane generated anew.
func capiSASecretDeleted(ctx context.Context, env *Env) (*Evidence, error) {
	return capiScenario{name: "capi-sa-secret-deleted", before: deleteSASecret, after: 20 * time.Second}.run(ctx, env)
}

// capiIssuerPlaceholder is the scenario capi-issuer-placeholder: the KubeadmControlPlane's
// issuer is a placeholder that a sed in postKubeadmCommands rewrites in the apiserver's manifest
// after kubeadm has started it, so each joined machine serves with the wrong issuer until the
// kubelet restarts its apiserver.
func capiIssuerPlaceholder(ctx context.Context, env *Env) (*Evidence, error) {
	return capiScenario{name: "capi-issuer-placeholder", before: setIssuerPlaceholder}.run(ctx, env)
}

// The placeholder and the issuer the sed puts in its place (kubeadm's default, the cluster's).
const (
	placeholderIssuer = "https://issuer.placeholder.invalid"
	clusterIssuer     = "https://kubernetes.default.svc.cluster.local"
)

func setIssuerPlaceholder(ctx context.Context, c *capilab.Lab, ce *CAPIEvidence) error {
	sed := fmt.Sprintf("sed -i 's|%s|%s|' /etc/kubernetes/manifests/kube-apiserver.yaml", placeholderIssuer, clusterIssuer)
	ce.Patched = fmt.Sprintf("apiServer.extraArgs.service-account-issuer=%s; postKubeadmCommands: %s", placeholderIssuer, sed)
	return c.PatchKubeadmConfigSpec(ctx, map[string]any{
		"clusterConfiguration": map[string]any{"apiServer": map[string]any{"extraArgs": map[string]any{"service-account-issuer": placeholderIssuer}}},
		"postKubeadmCommands":  []any{sed},
	})
}

func deleteSASecret(ctx context.Context, c *capilab.Lab, ce *CAPIEvidence) error {
	var err error
	if ce.SAKeyBefore, err = c.SAKey(ctx); err != nil {
		return err
	}
	return c.DeleteSASecret(ctx)
}

func (cs capiScenario) run(ctx context.Context, env *Env) (ev *Evidence, err error) {
	o := env.CAPI.complete()
	s, _ := Get(cs.name)
	ev = env.evidence(s)
	cfg := capilab.Config{CAPI: o.Version, Log: env.Log, Cluster: workload.Config{Name: "w1",
		LoadBalancer: infra.LoadBalancer{HealthCheck: lb.HealthCheck(o.HealthCheck), Deregistration: infra.Deregistration(o.Deregistration)}}}
	if cs.selfManaged {
		cfg.SelfManaged, cfg.Cluster.Workers = true, 1
		cfg.ProviderInCluster = o.ProviderInCluster
	}
	c, err := capilab.Start(ctx, env.Lab, cfg)
	if err != nil {
		return ev, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
		defer cancel()
		err = errors.Join(err, c.Stop(sctx))
	}()
	if _, err := c.WaitControlPlane(ctx, 1); err != nil {
		return ev, err
	}
	ce := &CAPIEvidence{CAPI: o.Version, HealthCheck: o.HealthCheck, Deregistration: o.Deregistration}
	ev.CAPI = ce
	wcfg, err := workloadREST(ctx, c)
	if err != nil {
		return ev, err
	}
	mgmt := env.Lab.RESTConfig()
	if cs.selfManaged {
		if ce.SelfManaged, err = prepareSelfManaged(ctx, c, wcfg, env.Log); err != nil {
			return ev, err
		}
		mgmt = wcfg // the cluster's Cluster API objects are in it now
	}
	tn, err := startTenants(ctx, c, capiTenants, "", env.Log)
	if err != nil {
		return ev, err
	}
	defer tn.Stop()
	stopWatch, err := startWatch(ctx, wcfg, mgmt, env.Log)
	if err != nil {
		return ev, err
	}
	defer func() {
		if stopWatch != nil {
			stopWatch()
		}
	}()
	// The machines to replace, read before the change: a changed kubeadmConfigSpec starts the
	// roll by itself.
	before, err := c.ControlPlane(ctx)
	if err != nil {
		return ev, err
	}
	late := &lateStart{c: c, log: env.Log, done: make(chan struct{})}
	for _, m := range before.Machines {
		late.before = append(late.before, m.Name)
	}
	if cs.before != nil {
		if err := cs.before(ctx, c, ce); err != nil {
			return ev, err
		}
	}
	ce.Prediction = predict(ctx, mgmt) // the cluster that holds its Cluster API objects
	tn.Reset()
	sctx, stopSampler := context.WithCancel(ctx)
	sampler := &runSampler{}
	sampled := make(chan struct{})
	go func() { defer close(sampled); sampler.sample(sctx, c, late.before) }()
	r, rerr := c.Roll(ctx, capilab.RollOptions{Machines: late.before, OnPhase: late.onPhase(ctx)})
	stopSampler()
	<-sampled
	ce.Roll = r
	if r.Blocked != nil {
		ce.Check = checkManagement(ctx, env)
	}
	snap := tn.Snapshot()
	lt, lerr := late.wait(ctx)
	if lt != nil {
		defer lt.Stop()
		snap = tally.Merge(snap, lt.Snapshot())
	}
	seen := map[string]int{}
	ev.Phases = append(ev.Phases, machinesPhase(c, "roll", r.Duration, r, slices.Concat(r.Before, r.After), snap, seen))
	if lt != nil {
		window := r.Ended.Sub(r.At(capilab.PhaseMemberRemoved, late.before[0])).Round(time.Second).String()
		lp := machinesPhase(c, "roll: pods created after the etcd removal", window, r, slices.Concat(r.Before, r.After), lt.Snapshot(), nil)
		lp.LogsIn = "roll"
		ev.Phases = append(ev.Phases, lp)
	} else if lerr != nil {
		ev.Notes = append(ev.Notes, "The late pods did not start: "+lerr.Error())
	}
	if rerr == nil && cs.after > 0 {
		tn.Reset()
		select {
		case <-ctx.Done():
			rerr = ctx.Err()
		case <-time.After(cs.after):
		}
		ev.Phases = append(ev.Phases, machinesPhase(c, "after roll", cs.after.String(), r, r.After, tn.Snapshot(), seen))
	}
	ce.Watch, stopWatch = stopWatch(), nil
	ce.APIServerRuns = sampler.result()
	var removed time.Time
	if len(r.Before) > 0 {
		removed = r.At(capilab.PhaseMemberRemoved, r.Before[0])
	}
	fromRemoval(ce.Watch, removed)
	if sm := ce.SelfManaged; sm != nil {
		sm.Self = summarize(ctx, c, wcfg, r, rerr, "itself", sm.load)
		to := time.Now()
		sm.InCluster = inClusterEvents(c, r.Started, to)
		fromRemoval(sm.InCluster, removed)
		sm.Logs = logsOfRoll(ctx, c, wcfg, r, to)
	}
	if ce.SAKeyBefore != "" {
		ce.SAKeyAfter, _ = c.SAKey(ctx)
	}
	ce.Prediction.Observed = ce.observed()
	ce.events = c.Events()
	for _, e := range ce.events {
		ce.Timeline = append(ce.Timeline, e.String())
	}
	finish(ev)
	if rerr != nil {
		return ev, rerr
	}
	ce.notes(ev)
	return ev, nil
}

// notes adds what this run measured to ev's notes.
func (ce *CAPIEvidence) notes(ev *Evidence) {
	r := ce.Roll
	ev.Notes = append(ev.Notes, ce.Prediction.note())
	if len(r.Before) == 1 {
		old := r.Before[0]
		removed := r.At(capilab.PhaseMemberRemoved, old)
		for _, e := range ce.events {
			if e.Machine == old && e.Step == infra.Deregister && !removed.IsZero() {
				ce.Window = e.Time.Sub(removed).Round(100 * time.Millisecond).String()
				if d := e.Time.Sub(removed); d < capilab.PollEvery {
					// The removal is timed by the look that first saw it: a deregistration
					// within one look of it (even before that look) is "at once".
					ce.Window = "under " + capilab.PollEvery.String() + " (within one look)"
				}
			}
		}
		if ce.Window != "" {
			ev.Notes = append(ev.Notes, fmt.Sprintf("%s stayed in the balancer %s after its etcd member was removed (Cluster API %s, %s check, deregistration %s).",
				old, ce.Window, ce.CAPI, ce.HealthCheck, ce.Deregistration))
		}
	}
	if ce.Patched != "" {
		for _, m := range r.After {
			if runs := ce.APIServerRuns[m]; len(runs) > 1 {
				ev.Notes = append(ev.Notes, fmt.Sprintf("%s's first kube-apiserver ran %s before the kubelet restarted it (%d runs).",
					m, runs[0].Last.Sub(runs[0].First).Round(100*time.Millisecond), len(runs)))
			}
		}
	}
	if b := r.Blocked; b != nil {
		ev.Notes = append(ev.Notes, fmt.Sprintf("KubeadmControlPlane stopped the roll: %s=%s (%s): %q; no new machine in %s (%d of %d machines up to date).",
			b.Condition.Type, b.Condition.Status, b.Condition.Reason, b.Condition.Message, r.Ended.Sub(b.Since).Round(time.Second), b.UpToDate, b.Replicas))
	}
	if ce.SAKeyBefore != "" {
		after := ce.SAKeyAfter
		if after == "" {
			after = "no Secret"
		}
		ev.Notes = append(ev.Notes, fmt.Sprintf("The service-account public key in the <cluster>-sa Secret went from %s to %s.", ce.SAKeyBefore, after))
	}
	for _, p := range ev.Phases {
		if t := p.Tenants; t.Unauthorized+t.NoResponse > 0 {
			ev.Notes = append(ev.Notes, fmt.Sprintf("Phase %s: the tenant's pods got %d 401s and %d requests without a response in %d.",
				p.Name, t.Unauthorized, t.NoResponse, t.Requests))
		}
	}
	if r.DrainErrors > 0 {
		ev.Notes = append(ev.Notes, fmt.Sprintf("The core manager's drain failed %d times through the balancer; the last: %s", r.DrainErrors, r.DrainError))
	}
}

func (c *CAPIEvidence) writeTable(w io.Writer) {
	fmt.Fprintf(w, "\nCluster API %s, balancer check %s, deregistration %s: roll %v -> %v in %s\n", c.CAPI, c.HealthCheck, c.Deregistration,
		c.Roll.Before, c.Roll.After, c.Roll.Duration)
	if c.Patched != "" {
		fmt.Fprintf(w, "KubeadmControlPlane patched before the roll: %s\n", c.Patched)
	}
	tw := report.NewTabWriter(w)
	report.Row(tw, "AFTER", "PHASE", "MACHINE")
	for _, p := range c.Roll.Phases {
		report.Row(tw, fmt.Sprintf("+%.1fs", p.At.Sub(c.Roll.Started).Seconds()), p.What, p.Machine)
	}
	_ = tw.Flush()
	if b := c.Roll.Blocked; b != nil {
		fmt.Fprintf(w, "Roll blocked: %s=%s (%s): %s\n", b.Condition.Type, b.Condition.Status, b.Condition.Reason, b.Condition.Message)
	}
	for _, f := range c.Check {
		fmt.Fprintf(w, "credwatch check --capi-cluster: %s\n", f)
	}
	if c.Window != "" {
		fmt.Fprintf(w, "Old member in the balancer after its etcd member was removed: %s\n", c.Window)
	}
	for _, m := range c.Roll.Before {
		if n, ok := c.Roll.OpenWhileOut[m]; ok {
			fmt.Fprintf(w, "Connections the balancer still passed to %s after it went out of rotation: %d at most\n", m, n)
		}
	}
	for _, m := range c.Roll.After {
		for _, run := range c.APIServerRuns[m] {
			fmt.Fprintf(w, "kube-apiserver on %s, run %s: %+.1fs to %+.1fs (%s)\n", m, run.File,
				run.First.Sub(c.Roll.Started).Seconds(), run.Last.Sub(c.Roll.Started).Seconds(), run.Last.Sub(run.First).Round(100*time.Millisecond))
		}
	}
	writeWatch(w, "credwatch watch from outside", c.Roll.Started, c.Watch)
	if c.Roll.DrainErrors > 0 {
		fmt.Fprintf(w, "Failed drains: %d (last: %s)\n", c.Roll.DrainErrors, c.Roll.DrainError)
	}
	if c.SelfManaged != nil {
		c.SelfManaged.writeTable(w, c.Roll.Started)
	}
}
