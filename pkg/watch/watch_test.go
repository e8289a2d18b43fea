// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/finding"
)

var healthy = []fakeMember{{name: "apiserver-1", kid: "k1"}, {name: "apiserver-2", kid: "k1"}, {name: "apiserver-3", kid: "k1"}}

func with(ms []fakeMember, extra ...fakeMember) []fakeMember {
	return append(slices.Clone(ms), extra...)
}

// recorder collects every interval's events.
type recorder struct {
	mu     sync.Mutex
	states []*State
	events [][]Event
}

func (r *recorder) Observe(s *State, ev []Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, s)
	r.events = append(r.events, ev)
}

// first returns the interval (1-based) of the first event matching, or 0.
func (r *recorder) first(match func(Event) bool) (int, Event) {
	for i, evs := range r.events {
		for _, e := range evs {
			if match(e) {
				return i + 1, e
			}
		}
	}
	return 0, Event{}
}

func runScript(t *testing.T, intervals int, steps ...[]fakeMember) (*recorder, Summary) {
	t.Helper()
	return runFetch(t, intervals, script(steps...))
}

// runFetch runs a watch whose intervals fetch through fetch until intervals of them have run.
func runFetch(t *testing.T, intervals int, fetch func(context.Context, check.MembersConfig) (*check.Snapshot, error)) (*recorder, Summary) {
	t.Helper()
	return runFetchEvery(t, intervals, 1, fetch)
}

// runFetchEvery is runFetch reading the members' /metrics every metricsEvery intervals.
func runFetchEvery(t *testing.T, intervals, metricsEvery int, fetch func(context.Context, check.MembersConfig) (*check.Snapshot, error)) (*recorder, Summary) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	stop := ObserverFunc(func(*State, []Event) {
		if len(rec.states) >= intervals {
			cancel()
		}
	})
	w, err := New(Config{Check: check.Config{Timeout: time.Second}, Interval: 10 * time.Millisecond, MetricsEvery: metricsEvery,
		Fetch: fetch, Observers: []Observer{rec, stop}})
	if err != nil {
		t.Fatal(err)
	}
	sum := w.Run(ctx)
	if len(rec.states) != intervals {
		t.Fatalf("%d intervals ran, want %d", len(rec.states), intervals)
	}
	return rec, sum
}

func kind(k Kind, member string) func(Event) bool {
	return func(e Event) bool { return e.Kind == k && e.Member == member }
}

func raised(id, member string) func(Event) bool {
	return func(e Event) bool { return e.Kind == FindingRaised && e.ID == id && e.Member == member }
}

func TestWatchKeyDriftRoll(t *testing.T) {
	t.Parallel()
	drifted := fakeMember{name: "apiserver-4", kid: "k2"}
	rec, sum := runScript(t, 8, healthy, healthy, with(healthy, drifted), with(healthy, drifted), healthy, healthy, healthy, healthy)
	if n, _ := rec.first(func(e Event) bool { return e.Kind == FindingRaised }); n != 3 {
		t.Errorf("first finding in interval %d, want 3 (when apiserver-4 joined); events %+v", n, rec.events)
	}
	if n, e := rec.first(raised("member-key-drift", "apiserver-4")); n != 3 || e.Severity != catalogue.Error {
		t.Errorf("member-key-drift naming apiserver-4: interval %d %+v", n, e)
	}
	if n, e := rec.first(func(e Event) bool {
		return e.Kind == HeldBroken && e.Signer == "apiserver-1" && e.Verifier == "apiserver-4"
	}); n != 3 || e.ID != "signing-key-unknown" {
		t.Errorf("held token of apiserver-1 broken on apiserver-4: interval %d %+v", n, e)
	}
	if n, _ := rec.first(func(e Event) bool { return e.Kind == FindingCleared && e.ID == "member-key-drift" }); n != 5 {
		t.Errorf("member-key-drift cleared in interval %d, want 5 (when apiserver-4 left)", n)
	}
	if n, _ := rec.first(kind(MemberLeft, "apiserver-4")); n != 5 {
		t.Errorf("member-left in interval %d, want 5", n)
	}
	if !sum.AnyAtLeast(catalogue.Error) || sum.AnyAtLeast(catalogue.Critical) {
		t.Errorf("summary worst %q, want error", sum.Worst)
	}
	if last := rec.states[len(rec.states)-1]; len(last.Findings) != 0 {
		t.Errorf("findings left after the roll: %+v", last.Findings)
	}
}

func TestWatchHealthyRollNoTokenFinding(t *testing.T) {
	t.Parallel()
	next := fakeMember{name: "apiserver-4", kid: "k1"}
	rec, sum := runScript(t, 5, healthy, with(healthy, next), with(healthy[1:], next), with(healthy[1:], next))
	for i, evs := range rec.events {
		for _, e := range evs {
			if e.Severity.AtLeast(catalogue.Warning) {
				t.Errorf("interval %d: %+v", i+1, e)
			}
		}
	}
	if sum.AnyAtLeast(catalogue.Warning) {
		t.Errorf("summary worst %q", sum.Worst)
	}
	if n, _ := rec.first(kind(MemberJoined, "apiserver-4")); n != 2 {
		t.Errorf("apiserver-4 joined in interval %d, want 2", n)
	}
}

func TestWatchMemberDownAndBack(t *testing.T) {
	t.Parallel()
	down := with(healthy[:2], fakeMember{name: "apiserver-3", kid: "k1", down: true})
	rec, _ := runScript(t, 5, healthy, down, down, healthy, healthy)
	if n, e := rec.first(kind(MemberDown, "apiserver-3")); n != 2 || e.ID != "member-unreachable" {
		t.Errorf("member-down: interval %d %+v", n, e)
	}
	if n, _ := rec.first(raised("member-unreachable", "apiserver-3")); n != 2 {
		t.Errorf("member-unreachable finding in interval %d", n)
	}
	if n, _ := rec.first(kind(MemberUp, "apiserver-3")); n != 4 {
		t.Errorf("member-up in interval %d, want 4", n)
	}
	if n, _ := rec.first(func(e Event) bool { return e.Kind == TrustBroken }); n != 0 {
		t.Errorf("a down member broke trust cells (unknown cells must be left to member events): interval %d", n)
	}
}

func TestWatchUnreadyAndAuthFailures(t *testing.T) {
	t.Parallel()
	unready := with(healthy[:2], fakeMember{name: "apiserver-3", kid: "k1", notReady: []string{"etcd"}, authFail: 5})
	rec, _ := runScript(t, 3, healthy, unready, healthy)
	if n, e := rec.first(kind(MemberUnready, "apiserver-3")); n != 2 || !strings.Contains(e.Message, "etcd") {
		t.Errorf("member-unready naming etcd: interval %d %+v", n, e)
	}
	if n, _ := rec.first(raised("member-not-ready", "apiserver-3")); n != 2 {
		t.Errorf("member-not-ready finding: interval %d", n)
	}
	if n, e := rec.first(kind(AuthFailures, "apiserver-3")); n != 2 || !strings.Contains(e.Message, "5 more") {
		t.Errorf("auth-failures-rising: interval %d %+v", n, e)
	}
	if n, _ := rec.first(kind(MemberReady, "apiserver-3")); n != 3 {
		t.Errorf("member-ready: interval %d", n)
	}
}

// fakeClock is a Clock that moves only when the loop sleeps or a test's fetch says time passed.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	c.advance(d)
	return true
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// A fetch that hangs until its deadline delays the next interval by one timeout at most, and an
// interval whose whole span passed meanwhile is skipped. On a fake clock, so the figures are
// exact whatever the machine's load (BenchmarkWatchHangingFetch measures them on the wall clock).
func TestWatchHangingFetchBounded(t *testing.T) {
	t.Parallel()
	const interval = 10 * time.Second
	for _, tt := range []struct {
		name      string
		timeout   time.Duration
		hang      []int // the calls that hang until their deadline
		intervals []int // the intervals observed
		slipped   int
		maxSlip   time.Duration
	}{
		{"no hang", 6 * time.Second, nil, []int{1, 2, 3, 4, 5, 6, 7, 8}, 0, 0},
		{"one hang: the next interval one timeout late", 6 * time.Second, []int{2}, []int{1, 2, 3, 4, 5, 6, 7, 8}, 1, 6 * time.Second},
		{"two hangs in a row: still one timeout", 6 * time.Second, []int{2, 3}, []int{1, 2, 3, 4, 5, 6, 7, 8}, 2, 6 * time.Second},
		{"a timeout longer than the interval: one interval skipped", 15 * time.Second, []int{2}, []int{1, 2, 4, 5, 6, 7, 8}, 1, 5 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clock := &fakeClock{t: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
			start := clock.Now()
			calls := 0
			fetch := func(ctx context.Context, cfg check.MembersConfig) (*check.Snapshot, error) {
				calls++
				if !slices.Contains(tt.hang, calls) {
					return fakeSnapshot(cfg, healthy), nil
				}
				// The documented bound: the interval's scheduled start plus one interval and one
				// timeout. The watcher's own deadline is a span of wall time no longer than that.
				now := clock.Now()
				at := start.Add(now.Sub(start) / interval * interval)
				budget := at.Add(interval + tt.timeout).Sub(now)
				if dl, ok := ctx.Deadline(); !ok || ctx.Err() != nil || time.Until(dl) > budget {
					t.Errorf("call %d: deadline in %v (err %v), want a live one within %s", calls, time.Until(dl), ctx.Err(), budget)
				}
				clock.advance(budget)
				return nil, context.DeadlineExceeded
			}
			rec := &recorder{}
			w, err := New(Config{Check: check.Config{Timeout: tt.timeout}, Interval: interval, Duration: 8 * interval,
				Fetch: fetch, Clock: clock, Observers: []Observer{rec}})
			if err != nil {
				t.Fatal(err)
			}
			sum := w.Run(context.Background())
			var got []int
			for _, s := range rec.states {
				got = append(got, s.Interval)
			}
			if !slices.Equal(got, tt.intervals) {
				t.Errorf("intervals observed %v, want %v", got, tt.intervals)
			}
			if sum.Slipped != tt.slipped || sum.MaxSlip != tt.maxSlip {
				t.Errorf("slipped %d (max %s), want %d (max %s)", sum.Slipped, sum.MaxSlip, tt.slipped, tt.maxSlip)
			}
			if end := clock.Now().Sub(start); end > 8*interval+tt.timeout {
				t.Errorf("the watch ended %s after its start, want at most --duration plus one timeout", end)
			}
		})
	}
}

func TestWatchStopsOnCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	rec := &recorder{}
	fetch := func(ctx context.Context, cfg check.MembersConfig) (*check.Snapshot, error) {
		cancel()
		<-ctx.Done()
		return fakeSnapshot(cfg, nil), nil
	}
	w, _ := New(Config{Check: check.Config{Timeout: time.Second}, Interval: time.Second, Fetch: fetch, Observers: []Observer{rec}})
	w.Run(ctx)
	if len(rec.states) != 0 {
		t.Errorf("an interval cut short by cancellation was observed: %+v", rec.states)
	}
}

func TestHeldTokensRenewAndDrop(t *testing.T) {
	t.Parallel()
	h := newHeldTokens(100 * time.Second) // renewed after 80 s
	t0 := time.Unix(1000, 0)
	h.minted("a", "t1")
	h.minted("b", "t1b")
	h.settle(t0)
	h.minted("a", "t2")
	h.settle(t0.Add(10 * time.Second))
	if got := h.tokens(); len(got) != 2 || got[0].Token != "t1" || got[0].Name != "held:a" {
		t.Fatalf("held before renewal: %+v", got)
	}
	h.minted("a", "t3")
	h.settle(t0.Add(81 * time.Second)) // a renewed; b not seen and due: dropped
	if got := h.tokens(); len(got) != 1 || got[0].Token != "t3" {
		t.Fatalf("held after renewal: %+v", got)
	}
}

func TestHeldTokensRename(t *testing.T) {
	t.Parallel()
	h := newHeldTokens(100 * time.Second)
	t0 := time.Unix(1000, 0)
	h.minted("10.0.0.1:6443", "t1")
	h.settle(t0)
	h.rename("10.0.0.1:6443", "kube-apiserver-cp-1")
	h.minted("kube-apiserver-cp-1", "t2")
	h.settle(t0.Add(5 * time.Second))
	if got := h.tokens(); len(got) != 1 || got[0].Name != "held:kube-apiserver-cp-1" || got[0].Token != "t1" {
		t.Fatalf("held after the member was named: %+v", got)
	}
}

func TestJSONLinesContract(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	j := NewJSONLines(&b)
	drifted := fakeMember{name: "apiserver-4", kid: "k2"}
	rec, _ := runScript(t, 3, healthy, with(healthy, drifted), healthy)
	for i, evs := range rec.events {
		j.Observe(rec.states[i], evs)
	}
	if err := j.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "token-of-") {
		t.Error("a token is in the JSON lines")
	}
	sc := bufio.NewScanner(&b)
	n := 0
	for sc.Scan() {
		n++
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		for _, k := range []string{"time", "kind", "member", "severity", "interval", "message"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line %d lacks %q: %s", n, k, sc.Text())
			}
		}
		if _, err := time.Parse(time.RFC3339, m["time"].(string)); err != nil {
			t.Errorf("line %d: time: %v", n, err)
		}
		if k := m["kind"]; (k == string(TrustBroken) || k == string(FindingRaised)) && m["id"] == nil {
			t.Errorf("line %d: %s without id", n, k)
		}
	}
	if n < 5 {
		t.Errorf("%d lines", n)
	}
}

func TestViewPlainAndLive(t *testing.T) {
	t.Parallel()
	drifted := fakeMember{name: "apiserver-4", kid: "k2"}
	rec, _ := runScript(t, 2, healthy, with(healthy, drifted))
	var plain, live bytes.Buffer
	l, v := NewLines(&plain), NewLive(&live, 5)
	for i, evs := range rec.events {
		l.Observe(rec.states[i], evs)
		v.Observe(rec.states[i], evs)
	}
	if strings.Contains(plain.String(), "\x1b") {
		t.Error("plain lines contain escape codes")
	}
	if !strings.Contains(plain.String(), "member-key-drift") {
		t.Errorf("plain lines lack the key drift:\n%s", plain.String())
	}
	out := live.String()
	for _, want := range []string{"\x1b[H\x1b[2J", "TRUST", "HELD TOKENS", "signing-key-unknown", "RECENT EVENTS", "apiserver-4"} {
		if !strings.Contains(out, want) {
			t.Errorf("live view lacks %q", want)
		}
	}
}

// An interval whose trust matrix could not be built (the load balancer sent the probe account's
// GET to a member being stopped) keeps the token findings: unknown is not cleared.
func TestWatchSkippedCheckKeepsFindings(t *testing.T) {
	t.Parallel()
	drift := with(healthy, fakeMember{name: "apiserver-4", kid: "k2"})
	calls := 0
	fetch := func(_ context.Context, cfg check.MembersConfig) (*check.Snapshot, error) {
		calls++
		s := fakeSnapshot(cfg, drift)
		if calls == 2 {
			s.Matrix, s.Tokens = nil, nil
			s.Sources[check.SrcMatrix] = "get probe service account: context deadline exceeded"
		}
		return s, nil
	}
	rec, _ := runFetch(t, 3, fetch)
	if n, e := rec.first(func(e Event) bool { return e.Kind == FindingCleared && e.ID == "member-key-drift" }); n != 0 {
		t.Errorf("member-key-drift cleared in interval %d while the matrix was unknown: %+v", n, e)
	}
	if n, _ := rec.first(func(e Event) bool { return e.Kind == FindingRaised && e.ID == "check-skipped" }); n != 2 {
		t.Errorf("check-skipped raised in interval %d, want 2", n)
	}
}

// A check that reads /metrics (authentication-config here) is judged in the intervals that read
// them, and its findings stand in the intervals between: raised once, never cleared.
func TestWatchMetricsChecksBetweenReads(t *testing.T) {
	t.Parallel()
	fetch := func(_ context.Context, cfg check.MembersConfig) (*check.Snapshot, error) {
		s := fakeSnapshot(cfg, healthy)
		for i := range s.Members {
			if m := &s.Members[i]; m.Metrics != nil {
				m.Metrics.Authn = &check.AuthnMetrics{APIServerIDHash: "sha256:id-" + m.Name, ConfigHash: "sha256:a"}
				if m.Name == "apiserver-3" {
					m.Metrics.Authn.ConfigHash = "sha256:b"
				}
			}
		}
		return s, nil
	}
	rec, _ := runFetchEvery(t, 5, 2, fetch)
	if n, _ := rec.first(raised("authn-config-differs", "apiserver-3")); n != 1 {
		t.Errorf("authn-config-differs naming apiserver-3 raised in interval %d, want 1", n)
	}
	if n, e := rec.first(func(e Event) bool {
		return e.Kind == FindingCleared || e.Kind == FindingRaised && e.ID == "check-skipped"
	}); n != 0 {
		t.Errorf("interval %d without /metrics: %+v", n, e)
	}
	for i, st := range rec.states {
		if !slices.ContainsFunc(st.Findings, func(f finding.Finding) bool { return f.ID == "authn-config-differs" }) {
			t.Errorf("interval %d lacks authn-config-differs: %+v", i+1, st.Findings)
		}
	}
}

// An interval whose discovery failed does not report the members it could not list as left.
func TestWatchDiscoveryFailureKeepsMembers(t *testing.T) {
	t.Parallel()
	calls := 0
	fetch := func(_ context.Context, cfg check.MembersConfig) (*check.Snapshot, error) {
		calls++
		if calls == 2 {
			s := fakeSnapshot(cfg, healthy[:1])
			s.Sources[check.SrcEndpointSlices] = "list EndpointSlices: context deadline exceeded"
			return s, nil
		}
		return fakeSnapshot(cfg, healthy), nil
	}
	rec, _ := runFetch(t, 3, fetch)
	if n, e := rec.first(func(e Event) bool { return e.Kind == MemberLeft || e.Kind == MemberJoined && e.Interval > 1 }); n != 0 {
		t.Errorf("interval %d: %+v", n, e)
	}
}

// Summary.Reached counts the intervals in which a member answered: a watch of a cluster it never
// reached must not read as a quiet one.
func TestSummaryReached(t *testing.T) {
	t.Parallel()
	down := []fakeMember{{name: "apiserver-1", kid: "k1", down: true}}
	refused := func(context.Context, check.MembersConfig) (*check.Snapshot, error) {
		return nil, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	}
	for _, tt := range []struct {
		name      string
		fetch     func(context.Context, check.MembersConfig) (*check.Snapshot, error)
		reached   int
		unreached string
	}{
		{"healthy", script(healthy), 3, ""},
		{"every member down", script(down), 0, "GET /version: connection refused"},
		{"fetch fails", refused, 0, "connection refused"},
		{"no member found", script(nil), 0, "no member found"},
		{"up once", script(down, healthy, down), 1, "GET /version: connection refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := 0
			stop := ObserverFunc(func(*State, []Event) {
				if n++; n >= 3 {
					cancel()
				}
			})
			w, err := New(Config{Check: check.Config{Timeout: time.Second}, Interval: time.Millisecond, Fetch: tt.fetch, Observers: []Observer{stop}})
			if err != nil {
				t.Fatal(err)
			}
			sum := w.Run(ctx)
			if sum.Reached != tt.reached || sum.NeverReached() != (tt.reached == 0) || !strings.Contains(sum.Unreached, tt.unreached) {
				t.Errorf("reached %d, unreached %q; want %d, %q", sum.Reached, sum.Unreached, tt.reached, tt.unreached)
			}
		})
	}
}

// Summary.Trusted counts the intervals in which the trust matrix was built: a watch whose probe
// service account is missing or forbidden reached the members and reviewed no token.
func TestSummaryTrusted(t *testing.T) {
	t.Parallel()
	const forbidden = `serviceaccounts "credwatch-probe" is forbidden`
	noMatrix := func(_ context.Context, cfg check.MembersConfig) (*check.Snapshot, error) {
		s := fakeSnapshot(cfg, healthy)
		s.Matrix, s.Sources[check.SrcMatrix] = nil, forbidden
		return s, nil
	}
	mixed := 0
	once := func(ctx context.Context, cfg check.MembersConfig) (*check.Snapshot, error) {
		if mixed++; mixed == 2 {
			return script(healthy)(ctx, cfg)
		}
		return noMatrix(ctx, cfg)
	}
	for _, tt := range []struct {
		name      string
		fetch     func(context.Context, check.MembersConfig) (*check.Snapshot, error)
		trusted   int
		untrusted string
	}{
		{"healthy", script(healthy), 3, ""},
		{"probe forbidden", noMatrix, 0, forbidden},
		{"built once", once, 1, forbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := 0
			stop := ObserverFunc(func(*State, []Event) {
				if n++; n >= 3 {
					cancel()
				}
			})
			w, err := New(Config{Check: check.Config{Timeout: time.Second}, Interval: time.Millisecond, Fetch: tt.fetch, Observers: []Observer{stop}})
			if err != nil {
				t.Fatal(err)
			}
			sum := w.Run(ctx)
			if sum.Trusted != tt.trusted || sum.NeverTrusted() != (tt.trusted == 0) || !strings.Contains(sum.Untrusted, tt.untrusted) {
				t.Errorf("trusted %d, untrusted %q; want %d, %q", sum.Trusted, sum.Untrusted, tt.trusted, tt.untrusted)
			}
		})
	}
}
