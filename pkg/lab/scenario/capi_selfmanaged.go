// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/report"
)

// capiSelfManagedRoll is the scenario capi-self-managed-roll: the first field report's open
// question ("only management clusters") on a management cluster that manages itself. One
// workload cluster (a control-plane machine and a worker) runs platform controllers; its control
// plane is rolled once from the management lab, then it is made to manage itself (the managers
// as Pods on its worker, clusterctl move) and rolled again by its own KubeadmControlPlane.
func capiSelfManagedRoll(ctx context.Context, env *Env) (*Evidence, error) {
	return capiScenario{name: "capi-self-managed-roll", selfManaged: true}.run(ctx, env)
}

// SelfManagedEvidence compares the two rolls of capi-self-managed-roll.
type SelfManagedEvidence struct {
	Move capilab.Moved `json:"move"`
	// Managed is the roll made from the management lab, before the move; Self the roll the
	// cluster's own managers made (the scenario's Roll).
	Managed RollSummary `json:"managedRoll"`
	Self    RollSummary `json:"selfManagedRoll"`
}

// RollSummary is one roll of capi-self-managed-roll and what the cluster's controllers went
// through during it and settle after it.
type RollSummary struct {
	ManagedFrom string `json:"managedFrom"` // "the management lab" or "itself"
	Outcome     string `json:"outcome"`     // completed, blocked or failed: …
	Duration    string `json:"duration"`
	// Deleting, MemberRemoved and Deleted are when the old machine's deletion started, its etcd
	// member went and the Machine was gone, after the roll started.
	Deleting      string `json:"deleting,omitempty"`
	MemberRemoved string `json:"memberRemoved,omitempty"`
	Deleted       string `json:"deleted,omitempty"`
	DrainErrors   int    `json:"drainErrors"`
	// Platform and Managers are the platform's controllers and (self-managed) Cluster API's.
	Platform []capilab.ControllerReport `json:"platform"`
	Managers []capilab.ControllerReport `json:"managers,omitempty"`
	// Refusals are the requests each member refused, per minute of the roll.
	Refusals []capilab.MemberMinute `json:"refusals,omitempty"`
}

// settle is how long after a roll its summary still counts: controllers that lost their Lease
// at its end restart within it.
const settle = 20 * time.Second

// prepareSelfManaged deploys the platform, makes the comparison roll from the management lab and
// moves the cluster into itself.
func prepareSelfManaged(ctx context.Context, c *capilab.Lab, wcfg *rest.Config, log io.Writer) (*SelfManagedEvidence, error) {
	sm := &SelfManagedEvidence{}
	if err := c.DeployPlatform(ctx, wcfg, capilab.DefaultPlatform()); err != nil {
		return nil, err
	}
	r, err := c.Roll(ctx, capilab.RollOptions{})
	fmt.Fprintf(log, "capi-self-managed-roll: the roll from the management lab took %s\n", r.Duration)
	sm.Managed = summarize(ctx, c, wcfg, r, err, "the management lab")
	if err != nil {
		return sm, fmt.Errorf("the roll from the management lab: %w", err)
	}
	if sm.Move, err = c.Move(ctx); err != nil {
		return sm, err
	}
	return sm, nil
}

// summarize waits settle after r, then reads what the controllers went through in it.
func summarize(ctx context.Context, c *capilab.Lab, wcfg *rest.Config, r capilab.Roll, rollErr error, from string) RollSummary {
	s := RollSummary{ManagedFrom: from, Duration: r.Duration, DrainErrors: r.DrainErrors, Outcome: "completed"}
	switch {
	case rollErr != nil:
		s.Outcome = "failed: " + rollErr.Error()
	case r.Blocked != nil:
		s.Outcome = "blocked: " + r.Blocked.Condition.Message
	}
	if len(r.Before) > 0 {
		old := r.Before[0]
		at := func(what string) string {
			if t := r.At(what, old); !t.IsZero() {
				return fmt.Sprintf("+%.1fs", t.Sub(r.Started).Seconds())
			}
			return ""
		}
		s.Deleting, s.MemberRemoved, s.Deleted = at(capilab.PhaseDeleting), at(capilab.PhaseMemberRemoved), at(capilab.PhaseMachineDeleted)
	}
	select {
	case <-ctx.Done():
	case <-time.After(settle):
	}
	to := time.Now()
	if r.Ended.IsZero() {
		r.Ended = to
	}
	cs, err := kubernetes.NewForConfig(wcfg)
	if err != nil {
		s.Outcome += "; no client: " + err.Error()
		return s
	}
	s.Platform = c.PlatformReport(ctx, cs, capilab.DefaultPlatform(), r.Started, to)
	s.Managers = c.ManagerReport(ctx, cs, r.Started, to)
	s.Refusals = c.Refusals(append(append([]string(nil), r.Before...), r.After...), r.Started, to)
	return s
}

// writeTable prints the two rolls side by side, then each controller.
func (sm *SelfManagedEvidence) writeTable(w io.Writer) {
	fmt.Fprintf(w, "\nSelf-managed: managers on %s (install %s, clusterctl move %s)\n", sm.Move.Node,
		sm.Move.Install.Round(time.Second), sm.Move.Move.Round(time.Second))
	tw := report.NewTabWriter(w)
	report.Row(tw, "MANAGED FROM", "OUTCOME", "ROLL", "DELETING", "ETCD REMOVED", "DELETED", "DRAIN ERRORS", "REFUSED")
	for _, s := range []RollSummary{sm.Managed, sm.Self} {
		refused := 0
		for _, m := range s.Refusals {
			refused += m.Lines
		}
		report.Row(tw, s.ManagedFrom, s.Outcome, s.Duration, s.Deleting, s.MemberRemoved, s.Deleted, fmt.Sprint(s.DrainErrors), fmt.Sprint(refused))
	}
	_ = tw.Flush()
	tw = report.NewTabWriter(w)
	report.Row(tw, "ROLL", "CONTROLLER", "WHERE", "PODS", "RESTARTS", "LEASE LOST", "WRITES", "FAILED", "ERRORS")
	for _, s := range []RollSummary{sm.Managed, sm.Self} {
		for _, r := range append(append([]capilab.ControllerReport(nil), s.Platform...), s.Managers...) {
			var errs []string
			for _, e := range r.Errors {
				errs = append(errs, fmt.Sprintf("%s ×%d", e.Kind, e.Count))
			}
			report.Row(tw, s.ManagedFrom, r.Name, r.Where, fmt.Sprint(r.Pods), fmt.Sprint(r.Restarts), fmt.Sprint(r.LostLease),
				fmt.Sprint(r.Writes), fmt.Sprint(r.WriteErrors), strings.Join(errs, ", "))
		}
	}
	_ = tw.Flush()
}
