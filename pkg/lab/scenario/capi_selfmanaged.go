// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	return capiScenario{name: CAPISelfManagedRoll, selfManaged: true}.run(ctx, env)
}

// CAPISelfManagedRoll is the name of the scenario that moves the cluster into itself, the only
// one CAPIOptions.ProviderInCluster applies to.
const CAPISelfManagedRoll = "capi-self-managed-roll"

// SelfManagedEvidence compares the two rolls of capi-self-managed-roll.
type SelfManagedEvidence struct {
	Move capilab.Moved `json:"move"`
	// Managed is the roll made from the management lab, before the move; Self the roll the
	// cluster's own managers made (the scenario's Roll).
	Managed RollSummary `json:"managedRoll"`
	Self    RollSummary `json:"selfManagedRoll"`
	// InCluster are the events of the chart's watcher, installed in the cluster after the move
	// (capilab.InstallWatcher), during the self-managed roll; the watcher from outside is
	// CAPIEvidence.Watch.
	InCluster []WatchEvent `json:"inClusterWatch"`
	// Logs are what credwatch logs said of the self-managed roll's kube-apiserver logs.
	Logs []RollLogs `json:"logs"`

	load *loadSampler
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
	// Etcd are the lines each member's etcd logged about its leader, its peers and slow
	// requests, per minute of the roll.
	Etcd []capilab.MemberMinute `json:"etcd,omitempty"`
	// Pressure names the nodes that reported DiskPressure, MemoryPressure or PIDPressure after
	// the roll, and Evicted counts the Pods the kubelets evicted (node pressure, not drains): the
	// lab's hosts share this machine's disk and memory.
	Pressure []string `json:"pressure,omitempty"`
	Evicted  int      `json:"evicted"`
	// LoadMax is the highest 1-minute load average of the machine the lab runs on during the
	// roll (/proc/loadavg, every 5 s): a roll on a starved machine is slow for that reason too.
	LoadMax float64 `json:"loadMax"`
}

// settle is how long after a roll its summary still counts: controllers that lost their Lease
// at its end restart within it.
const settle = 20 * time.Second

// prepareSelfManaged deploys the platform, makes the comparison roll from the management lab and
// moves the cluster into itself.
func prepareSelfManaged(ctx context.Context, c *capilab.Lab, wcfg *rest.Config, log io.Writer) (*SelfManagedEvidence, error) {
	sm := &SelfManagedEvidence{load: startLoadSampler(ctx)}
	if err := c.DeployPlatform(ctx, wcfg, capilab.DefaultPlatform()); err != nil {
		return nil, err
	}
	r, err := c.Roll(ctx, capilab.RollOptions{})
	fmt.Fprintf(log, "capi-self-managed-roll: the roll from the management lab took %s\n", r.Duration)
	sm.Managed = summarize(ctx, c, wcfg, r, err, "the management lab", sm.load)
	if err != nil {
		return sm, fmt.Errorf("the roll from the management lab: %w", err)
	}
	if sm.Move, err = c.Move(ctx); err != nil {
		return sm, err
	}
	if err := c.InstallWatcher(ctx, wcfg); err != nil {
		return sm, err
	}
	return sm, nil
}

// summarize waits settle after r, then reads what the controllers went through in it.
func summarize(ctx context.Context, c *capilab.Lab, wcfg *rest.Config, r capilab.Roll, rollErr error, from string, load *loadSampler) RollSummary {
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
	machines := append(append([]string(nil), r.Before...), r.After...)
	s.Refusals = c.Refusals(machines, r.Started, to)
	s.Etcd = c.EtcdTrouble(machines, r.Started, to)
	s.LoadMax = load.max(r.Started, to)
	s.Pressure, s.Evicted = pressure(ctx, cs)
	return s
}

// writeTable prints the two rolls side by side, then each controller.
func (sm *SelfManagedEvidence) writeTable(w io.Writer, started time.Time) {
	fmt.Fprintf(w, "\nSelf-managed: managers on %s (install %s, clusterctl move %s)\n", sm.Move.Node,
		sm.Move.Install.Round(time.Second), sm.Move.Move.Round(time.Second))
	tw := report.NewTabWriter(w)
	report.Row(tw, "MANAGED FROM", "OUTCOME", "ROLL", "DELETING", "ETCD REMOVED", "DELETED", "DRAIN ERRORS", "REFUSED", "LOAD MAX", "EVICTED", "PRESSURE")
	for _, s := range []RollSummary{sm.Managed, sm.Self} {
		refused := 0
		for _, m := range s.Refusals {
			refused += m.Lines
		}
		report.Row(tw, s.ManagedFrom, s.Outcome, s.Duration, s.Deleting, s.MemberRemoved, s.Deleted, fmt.Sprint(s.DrainErrors),
			fmt.Sprint(refused), fmt.Sprintf("%.1f", s.LoadMax), fmt.Sprint(s.Evicted), strings.Join(s.Pressure, ", "))
	}
	_ = tw.Flush()
	for _, s := range []RollSummary{sm.Managed, sm.Self} {
		for _, e := range s.Etcd {
			fmt.Fprintf(w, "etcd, roll from %s, minute %d, %s: %s ×%d, first: %.200s\n", s.ManagedFrom, e.Minute, e.Member, e.Kind, e.Lines, e.Sample)
		}
	}
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
	for _, r := range sm.Self.Managers {
		for _, e := range r.Errors {
			fmt.Fprintf(w, "%s, %s ×%d, first: %.200s\n", r.Name, e.Kind, e.Count, e.Sample)
		}
	}
	writeWatch(w, "the chart's watcher in the cluster", started, sm.InCluster)
	writeRollLogs(w, sm.Logs)
}

// loadSampler reads the machine's 1-minute load average every 5 s until its context ends.
type loadSampler struct {
	mu      sync.Mutex
	samples []loadSample
}

type loadSample struct {
	at   time.Time
	load float64
}

func startLoadSampler(ctx context.Context) *loadSampler {
	s := &loadSampler{}
	go func() {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			if b, err := os.ReadFile("/proc/loadavg"); err == nil {
				if f := strings.Fields(string(b)); len(f) > 0 {
					if v, err := strconv.ParseFloat(f[0], 64); err == nil {
						s.mu.Lock()
						s.samples = append(s.samples, loadSample{time.Now(), v})
						s.mu.Unlock()
					}
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// max is the highest load sampled between from and to (0: none, or no sampler).
func (s *loadSampler) max(from, to time.Time) float64 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := 0.0
	for _, x := range s.samples {
		if !x.at.Before(from) && !x.at.After(to) && x.load > m {
			m = x.load
		}
	}
	return m
}

// pressure lists the nodes with a pressure condition True and counts the Pods evicted by a
// kubelet.
func pressure(ctx context.Context, cs kubernetes.Interface) ([]string, int) {
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var out []string
	if nodes, err := cs.CoreV1().Nodes().List(pctx, metav1.ListOptions{}); err == nil {
		for _, n := range nodes.Items {
			for _, c := range n.Status.Conditions {
				if c.Status == corev1.ConditionTrue && strings.HasSuffix(string(c.Type), "Pressure") {
					out = append(out, n.Name+": "+string(c.Type))
				}
			}
		}
	}
	evicted := 0
	if pods, err := cs.CoreV1().Pods("").List(pctx, metav1.ListOptions{}); err == nil {
		for _, p := range pods.Items {
			if p.Status.Reason == "Evicted" {
				evicted++
			}
		}
	}
	return out, evicted
}
