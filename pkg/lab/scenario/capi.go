// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/workload"
	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
	"github.com/credwatch/credwatch/pkg/report"
)

// CAPIOptions choose the Cluster API release and the LabCluster's balancer of a Cluster API
// scenario (RunOptions.CAPI).
type CAPIOptions struct {
	Version        string // capi.V181 (default) or capi.V184
	HealthCheck    string // tcp, tls (default) or https-readyz
	Deregistration string // on-machine-delete (default) or on-drain
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
}

// capiRoll is the scenario capi-roll: a one-machine workload control plane made by the real
// KubeadmControlPlane, rolled 1 → 2 → 1 by spec.rolloutAfter.
func capiRoll(ctx context.Context, env *Env) (ev *Evidence, err error) {
	o := env.CAPI.complete()
	s, _ := Get("capi-roll")
	ev = env.evidence(s)
	c, err := capilab.Start(ctx, env.Lab, capilab.Config{CAPI: o.Version, Log: env.Log, Cluster: workload.Config{Name: "w1",
		LoadBalancer: infra.LoadBalancer{HealthCheck: lb.HealthCheck(o.HealthCheck), Deregistration: infra.Deregistration(o.Deregistration)}}})
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
	r, rerr := c.Roll(ctx)
	ce := &CAPIEvidence{CAPI: o.Version, HealthCheck: o.HealthCheck, Deregistration: o.Deregistration, Roll: r}
	for _, e := range c.Events() {
		ce.Timeline = append(ce.Timeline, e.String())
	}
	ev.CAPI = ce
	finish(ev)
	if rerr != nil {
		return ev, rerr
	}
	if len(r.Before) == 1 {
		old := r.Before[0]
		removed := r.At(capilab.PhaseMemberRemoved, old)
		for _, e := range c.Events() {
			if e.Machine == old && e.Step == infra.Deregister && !removed.IsZero() {
				ce.Window = e.Time.Sub(removed).Round(100 * time.Millisecond).String()
			}
		}
		if ce.Window != "" {
			ev.Notes = append(ev.Notes, fmt.Sprintf("%s stayed in the balancer %s after its etcd member was removed (Cluster API %s, %s check, deregistration %s).",
				old, ce.Window, o.Version, o.HealthCheck, o.Deregistration))
		}
	}
	if r.DrainErrors > 0 {
		ev.Notes = append(ev.Notes, fmt.Sprintf("The core manager's drain failed %d times through the balancer; the last: %s", r.DrainErrors, r.DrainError))
	}
	return ev, nil
}

func (c *CAPIEvidence) writeTable(w io.Writer) {
	fmt.Fprintf(w, "\nCluster API %s, balancer check %s, deregistration %s: roll %v -> %v in %s\n", c.CAPI, c.HealthCheck, c.Deregistration,
		c.Roll.Before, c.Roll.After, c.Roll.Duration)
	tw := report.NewTabWriter(w)
	report.Row(tw, "AFTER", "PHASE", "MACHINE")
	for _, p := range c.Roll.Phases {
		report.Row(tw, fmt.Sprintf("+%.1fs", p.At.Sub(c.Roll.Started).Seconds()), p.What, p.Machine)
	}
	_ = tw.Flush()
	if c.Window != "" {
		fmt.Fprintf(w, "Old member in the balancer after its etcd member was removed: %s\n", c.Window)
	}
	if c.Roll.DrainErrors > 0 {
		fmt.Fprintf(w, "Failed drains: %d (last: %s)\n", c.Roll.DrainErrors, c.Roll.DrainError)
	}
}
