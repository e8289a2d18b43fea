// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/finding"
)

// watchedSources are the sources a members-only fetch reads: watch runs every check that needs
// nothing else. The members' /metrics are read every Config.MetricsEvery intervals; the checks
// that need them keep their findings in the intervals between (see step).
func watchedSources() []string {
	return []string{check.SrcMembers, check.SrcMatrix, check.SrcPublicIssuer, check.SrcMetrics}
}

// metricsChecks names the checks among checks that read the members' /metrics.
func metricsChecks(checks []check.Check) map[string]bool {
	out := map[string]bool{}
	for _, c := range checks {
		if slices.Contains(c.Needs, check.SrcMetrics) {
			out[c.Name] = true
		}
	}
	return out
}

// watchedChecks are the checks of the registry whose Needs a members-only fetch serves.
func watchedChecks() []check.Check {
	var out []check.Check
	for _, ch := range check.Registry() {
		if !slices.ContainsFunc(ch.Needs, func(src string) bool { return !slices.Contains(watchedSources(), src) }) {
			out = append(out, ch)
		}
	}
	return out
}

// Config says what to watch and how often.
type Config struct {
	// Check is the configuration of every interval's fetch: REST, endpoints, probe account,
	// --token-file tokens, per-call Timeout. Watch fetches members only (check.FetchMembers), naming them as before.
	Check check.Config
	// Interval between the starts of two intervals (default 5 s).
	Interval time.Duration
	// Duration ends the watch after this long (0: until ctx is done).
	Duration time.Duration
	// MetricsEvery reads the members' /metrics every this many intervals (default: about every
	// 15 s); the metrics document is the largest a member serves.
	MetricsEvery int
	// Endpoints, when set, is asked every interval for member URLs to add to the discovered ones
	// (tests hand in the lab's current members).
	Endpoints func() []string
	// Fetch replaces check.FetchMembers (tests).
	Fetch func(context.Context, check.MembersConfig) (*check.Snapshot, error)
	// ClusterAPI, when set, reads the watched cluster's Cluster API view (its KubeadmControlPlane
	// and control-plane Machines on the management cluster, watch --capi-cluster) at the start of
	// every interval: the members are related to their Machines and a roll KubeadmControlPlane
	// will not go on with is a finding (check's capi-roll). A read that fails keeps the last one
	// read, and the interval's sources say why (check.SrcClusterAPI).
	ClusterAPI func(context.Context) (*check.ClusterAPI, error)
	// Observers receive every interval's state and events, in order.
	Observers []Observer
	// LogFiles are members' log files followed every interval (--log-file): the causes their
	// new lines name are the state's LogCauses.
	LogFiles []LogFile
	// AuditLogs are members' audit logs followed every interval (--audit-log): the service-account
	// token uses their new events name are the state's ServiceAccountTokens.
	AuditLogs []LogFile
	// AuditServiceAccounts bounds the accounts ServiceAccountTokens names per kind (default
	// DefaultAuditServiceAccounts; negative: none, every account counted as "other").
	AuditServiceAccounts int
	// PodLogs follows the kube-apiserver static pods' logs through the API too (needs get on
	// pods and pods/log in kube-system), in intervals that follow one where a member was a static
	// pod.
	PodLogs bool
	// LogQuiet clears a log cause no line has named for this long (default: 3 intervals, at
	// least 30 s).
	LogQuiet time.Duration
	// Clock schedules the intervals and dates the states (default: the wall clock, reading
	// Check.Now when set). When set, it replaces Check.Now too. Tests inject a fake one.
	Clock Clock
}

// Clock is the watch's time.
type Clock interface {
	Now() time.Time
	// Sleep waits for d to pass or ctx to be done, and reports whether d passed.
	Sleep(ctx context.Context, d time.Duration) bool
}

// wallClock is Clock on timers and now (time.Now, or check.Config.Now).
type wallClock struct{ now func() time.Time }

func (c wallClock) Now() time.Time { return c.now() }

func (wallClock) Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Observer receives each interval's state and the events that led to it. Observe is called from
// the loop: it must not block for long.
type Observer interface {
	Observe(s *State, events []Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(s *State, events []Event)

// Observe calls f.
func (f ObserverFunc) Observe(s *State, events []Event) { f(s, events) }

// Summary is what a finished watch saw.
type Summary struct {
	Intervals int `json:"intervals"`
	// Slipped counts intervals that started late by more than a tenth of the interval.
	Slipped int           `json:"slipped"`
	MaxSlip time.Duration `json:"maxSlip"`
	// Worst is the highest severity of the findings seen and the events raised.
	Worst    catalogue.Severity
	Findings map[string]finding.Finding // by ID/member/object: every finding seen, last message
	// Reached counts the intervals in which at least one member answered directly; 0 means
	// watch never reached the cluster (or no member ever answered), whatever else it reported.
	Reached int `json:"reached"`
	// Unreached says why, in the last interval in which no member answered: the fetch's error
	// or the first member's.
	Unreached string `json:"unreached,omitempty"`
	// Trusted counts the intervals in which the trust matrix was built (every member's token
	// put to every member); 0 means the trust checks never ran, whatever else was reported.
	Trusted int `json:"trusted"`
	// Untrusted says why the matrix was not built, in the last interval without it.
	Untrusted string `json:"untrusted,omitempty"`
}

// AnyAtLeast reports whether a finding or an event at or above sev was seen.
func (s Summary) AnyAtLeast(sev catalogue.Severity) bool {
	return s.Worst != "" && s.Worst.AtLeast(sev)
}

// NeverReached reports whether no member answered in any interval: a watch that saw nothing
// must not pass a gate.
func (s Summary) NeverReached() bool { return s.Reached == 0 }

// NeverTrusted reports whether the trust matrix was built in no interval: a gate that reviewed
// no member's tokens must not pass either (check exits 3 for the same partial run).
func (s Summary) NeverTrusted() bool { return s.Trusted == 0 }

// Watcher runs the loop.
type Watcher struct {
	c      Config
	held   *heldTokens
	seen   memberMemory
	checks []check.Check
	logs   *logCauses        // nil without LogFiles and PodLogs
	audits *auditLogs        // nil without AuditLogs
	pods   *podLogs          // nil without PodLogs
	ca     *check.ClusterAPI // the last Cluster API view read (Config.ClusterAPI); step's alone

	mu   sync.Mutex
	last *State
	sum  Summary
}

// New validates c and returns a watcher.
func New(c Config) (*Watcher, error) {
	if c.Interval <= 0 {
		c.Interval = 5 * time.Second
	}
	if c.Check.Timeout <= 0 {
		c.Check.Timeout = min(c.Interval, 10*time.Second)
	}
	if c.MetricsEvery <= 0 {
		c.MetricsEvery = max(1, int(15*time.Second/c.Interval))
	}
	if c.Fetch == nil {
		if c.Check.REST == nil {
			return nil, fmt.Errorf("watch: no client configuration")
		}
		c.Fetch = check.FetchMembers
	}
	if c.Check.Now == nil {
		c.Check.Now = time.Now
	}
	if c.Clock == nil {
		c.Clock = wallClock{now: c.Check.Now}
	}
	c.Check.Now = c.Clock.Now
	switch {
	case c.AuditServiceAccounts == 0:
		c.AuditServiceAccounts = DefaultAuditServiceAccounts
	case c.AuditServiceAccounts < 0:
		c.AuditServiceAccounts = 0
	}
	if c.LogQuiet <= 0 {
		c.LogQuiet = max(3*c.Interval, 30*time.Second)
	}
	w := &Watcher{c: c, held: newHeldTokens(check.ProbeTokenSeconds * time.Second),
		sum: Summary{Findings: map[string]finding.Finding{}}}
	if len(c.LogFiles) > 0 || c.PodLogs {
		w.logs = newLogCauses(c.LogFiles, c.LogQuiet)
	}
	if len(c.AuditLogs) > 0 {
		w.audits = newAuditLogs(c.AuditLogs, c.AuditServiceAccounts)
	}
	if c.PodLogs && c.Check.REST != nil {
		cs, err := kubernetes.NewForConfig(c.Check.REST)
		if err != nil {
			return nil, fmt.Errorf("watch: pod logs client: %w", err)
		}
		w.pods = newPodLogs(cs.CoreV1().Pods("kube-system"))
	}
	w.checks = watchedChecks()
	return w, nil
}

// readClusterAPI starts reading Config.ClusterAPI and sets cfg.ClusterAPIRead to wait for the
// view read now, or the last one read when this read fails; wait returns the read's error.
func (w *Watcher) readClusterAPI(ctx context.Context, cfg *check.MembersConfig) (wait func() error) {
	if w.c.ClusterAPI == nil {
		return func() error { return nil }
	}
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ca *check.ClusterAPI
		if ca, err = w.c.ClusterAPI(ctx); err == nil {
			w.ca = ca
		}
	}()
	wait = func() error {
		<-done
		return err
	}
	cfg.ClusterAPIRead = func() *check.ClusterAPI {
		_ = wait()
		return w.ca
	}
	return wait
}

// Last returns the last interval's state (nil before the first one ends).
func (w *Watcher) Last() *State {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// Run watches until ctx is done or Duration has passed. Interval k starts at start + k×Interval;
// each is bounded by Interval plus one per-call timeout, so a hanging member delays the next
// interval by at most one timeout. An interval whose whole span has passed is skipped.
func (w *Watcher) Run(ctx context.Context) Summary {
	clock := w.c.Clock
	start := clock.Now()
	for k := 0; ; {
		at := start.Add(time.Duration(k) * w.c.Interval)
		if w.c.Duration > 0 && at.Sub(start) >= w.c.Duration {
			break
		}
		if !sleepUntil(ctx, clock, at) {
			break
		}
		if !w.step(ctx, k+1, at) {
			break
		}
		// The next interval, started late rather than skipped unless it has passed entirely.
		k++
		for !start.Add(time.Duration(k+1) * w.c.Interval).After(clock.Now()) {
			k++
		}
	}
	if w.logs != nil {
		w.logs.close()
	}
	if w.audits != nil {
		w.audits.close()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sum
}

func sleepUntil(ctx context.Context, clock Clock, at time.Time) bool {
	d := at.Sub(clock.Now())
	if d <= 0 {
		return ctx.Err() == nil
	}
	return clock.Sleep(ctx, d)
}

// step runs interval n (scheduled at at) and hands its state and events to the observers. It
// returns false, observing nothing, when parent was cancelled meanwhile.
func (w *Watcher) step(parent context.Context, n int, at time.Time) bool {
	began := w.c.Clock.Now()
	slip := began.Sub(at)
	// The bound is a span from now, not an instant: the clock may be a test's.
	ctx, cancel := context.WithTimeout(parent, at.Add(w.c.Interval+w.c.Check.Timeout).Sub(began))
	defer cancel()

	cfg := check.MembersConfig{Config: w.c.Check,
		FreshConnections: true, // a connection wedged on a member that hung must not outlive the interval
		SkipMetrics:      (n-1)%w.c.MetricsEvery != 0}
	cfg.Tokens = append(slices.Clone(cfg.Tokens), w.held.tokens()...)
	if w.c.Endpoints != nil {
		cfg.Endpoints = append(slices.Clone(cfg.Endpoints), w.c.Endpoints()...)
	}
	prev := w.Last()
	if prev != nil {
		cfg.PriorNames = map[string]string{}
		for _, m := range prev.Members {
			cfg.PriorNames[m.URL] = m.Name
		}
	}
	// The Cluster API view is read beside the fetch, which waits for it only to relate the
	// members to their Machines: a management cluster whose reads hang (it is the cluster being
	// rolled) must not leave the members' probes no time.
	caRead := w.readClusterAPI(ctx, &cfg)
	podLines := w.followPods(ctx, prev, began)
	snap, err := w.c.Fetch(ctx, cfg)
	if err != nil {
		snap = &check.Snapshot{Now: began, Sources: map[string]string{check.SrcMembers: err.Error()}}
	}
	// The Cluster API and pod-log reads are the interval's sources too: own-requests judges them.
	lines := podLines()
	if caErr := caRead(); caErr != nil {
		unavailable(snap, check.SrcClusterAPI, check.ReasonOf(caErr))
	}
	if w.logs != nil && w.logs.errs[check.SrcPodLogs] != "" {
		unavailable(snap, check.SrcPodLogs, w.logs.errs[check.SrcPodLogs])
	}
	if parent.Err() != nil {
		return false
	}
	for _, m := range snap.Members { // PriorNames is nil in the first interval
		if was := cfg.PriorNames[m.URL]; was != "" && was != m.Name {
			w.held.rename(was, m.Name)
		}
	}
	for via, tok := range snap.Minted {
		w.held.minted(via, tok)
	}
	w.held.settle(began)
	r := check.Run(snap, w.checks)
	var carry map[string]bool // checks whose findings this interval cannot judge: the last ones stand
	if cfg.SkipMetrics {
		carry = metricsChecks(w.checks)
	}
	cur := newState(n, began, w.c.Clock.Now().Sub(began), snap, r, w.checks, carry, prev)
	if w.logs != nil {
		cur.LogCauses = w.logs.poll(w.c.Clock.Now(), lines)
		cur.LogTotals = w.logs.counts()
		cur.LogBehind = w.logs.behind()
		maps.Copy(cur.sources(), w.logs.errs)
	}
	if w.audits != nil {
		w.audits.poll()
		cur.ServiceAccountTokens = w.audits.acct.list()
		cur.LogBehind = append(cur.LogBehind, w.audits.behind()...)
		maps.Copy(cur.sources(), w.audits.errs)
	}
	w.seen.complete(cur, !cfg.SkipMetrics, snap.Missing(check.SrcEndpointSlices) == "" && snap.Missing(check.SrcStaticPods) == "")
	events := Diff(prev, cur)

	w.mu.Lock()
	w.last = cur
	w.sum.Intervals = n
	if slip > w.c.Interval/10 {
		w.sum.Slipped++
	}
	w.sum.MaxSlip = max(w.sum.MaxSlip, slip)
	for _, f := range cur.Findings {
		w.sum.Findings[findingKey(f)] = f
		w.sum.Worst = worse(w.sum.Worst, f.Severity)
	}
	for _, e := range events {
		w.sum.Worst = worse(w.sum.Worst, e.Severity)
	}
	if why, ok := unreached(cur, err); ok {
		w.sum.Unreached = why
	} else {
		w.sum.Reached++
	}
	switch why := snap.Missing(check.SrcMatrix); {
	case why != "":
		w.sum.Untrusted = why
	case snap.Matrix == nil:
		w.sum.Untrusted = "the interval's fetch failed"
	default:
		w.sum.Trusted++
	}
	w.mu.Unlock()
	for _, o := range w.c.Observers {
		o.Observe(cur, events)
	}
	return true
}

// unavailable records in snap why source could not be read.
func unavailable(snap *check.Snapshot, source, why string) {
	if snap.Sources == nil {
		snap.Sources = map[string]string{}
	}
	snap.Sources[source] = why
}

func worse(a, b catalogue.Severity) catalogue.Severity {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// unreached reports whether no member of s answered directly, and why: fetchErr, else the first
// member's error, else that no member was found.
func unreached(s *State, fetchErr error) (string, bool) {
	why := ""
	for _, m := range s.Members {
		if m.Up {
			return "", false
		}
		if why == "" && m.Error != "" {
			why = m.Name + ": " + m.Error
		}
	}
	switch {
	case fetchErr != nil:
		why = fetchErr.Error()
	case why == "" && len(s.Members) == 0:
		why = "no member found"
	case why == "":
		why = "no member answered"
	}
	return why, true
}
