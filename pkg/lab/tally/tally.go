// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package tally counts what the lab's tenants saw: their API calls by the member that served
// them and the member that minted their token, per pod, the 401s with samples and reasons, and
// the TokenRequests. The in-process tenants (lab/tenant), the tenant pods (lab/workload, one
// summary line at a time) and the reader of those pods' logs (lab/podtenant) all count with
// Tally, so their evidence says the same things under the same JSON keys.
package tally

import (
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/bearer"
)

// NoResponse is the member name recorded when a request got no HTTP response at all (connection
// refused, reset, timeout): there was no TLS handshake to name the member.
const NoResponse = bearer.NoResponse

// maxReasons bounds the distinct 401 reasons a tally keeps.
const maxReasons = 20

// maxSamples bounds the 401 samples a tally keeps.
const maxSamples = 50

// Member counts the requests one member served.
type Member struct {
	Member       string      `json:"member"`
	Requests     int         `json:"requests"`
	Unauthorized int         `json:"unauthorized"`
	Statuses     map[int]int `json:"statuses"`               // HTTP status -> count; 0 = no response
	TokensMinted int         `json:"tokensMinted,omitempty"` // TokenRequests this member answered
}

// Pair counts requests by which member minted the token and which member served the request.
type Pair struct {
	MintedBy     string `json:"mintedBy"`
	ServedBy     string `json:"servedBy"`
	Requests     int    `json:"requests"`
	Unauthorized int    `json:"unauthorized"`
}

// Pod counts one pod's requests.
type Pod struct {
	Pod               string    `json:"pod"`
	Node              string    `json:"node,omitempty"` // the node it runs on, when known
	Requests          int       `json:"requests"`
	Unauthorized      int       `json:"unauthorized"`
	LastAccepted      time.Time `json:"lastAccepted,omitzero"`      // last request answered 2xx
	FirstUnauthorized time.Time `json:"firstUnauthorized,omitzero"` // first 401
}

// Sample is one rejected (401) request.
type Sample struct {
	Time     time.Time `json:"time"`
	Pod      string    `json:"pod"`
	ServedBy string    `json:"servedBy"`
	MintedBy string    `json:"mintedBy"`
	TokenAge string    `json:"tokenAge"` // how long after TokenRequest the token was used
}

// Snapshot is a consistent copy of a tenant's tallies.
type Snapshot struct {
	Namespace    string    `json:"namespace"`
	Pods         int       `json:"pods"`
	Since        time.Time `json:"since"` // start, or the last Reset
	Requests     int       `json:"requests"`
	Unauthorized int       `json:"unauthorized"`
	NoResponse   int       `json:"noResponse"`
	TokensIssued int       `json:"tokensIssued"`
	TokenErrors  int       `json:"tokenErrors"`
	LastError    string    `json:"lastError,omitempty"`
	Members      []Member  `json:"members"`
	Pairs        []Pair    `json:"pairs,omitempty"`
	PerPod       []Pod     `json:"perPod,omitempty"`
	Samples      []Sample  `json:"samples,omitempty"` // up to 50 401s, oldest first
	Reasons      []string  `json:"reasons,omitempty"` // the distinct 401 reasons, sorted (up to 20)
}

// Member returns the tally of one member (zero if it served nothing).
func (s Snapshot) Member(name string) Member {
	for _, m := range s.Members {
		if m.Member == name {
			return m
		}
	}
	return Member{Member: name, Statuses: map[int]int{}}
}

// Pod returns the tally of one pod (zero if it made no request).
func (s Snapshot) Pod(name string) Pod {
	for _, p := range s.PerPod {
		if p.Pod == name {
			return p
		}
	}
	return Pod{Pod: name}
}

// UnauthorizedRate is the share of requests that got a 401 (0 when there were none).
func (s Snapshot) UnauthorizedRate() float64 {
	if s.Requests == 0 {
		return 0
	}
	return float64(s.Unauthorized) / float64(s.Requests)
}

// Merge adds the counts of several snapshots (for several tenants in one scenario).
func Merge(snaps ...Snapshot) Snapshot {
	var t Tally
	t.reset(time.Time{})
	for _, s := range snaps {
		if t.since.IsZero() || (!s.Since.IsZero() && s.Since.Before(t.since)) {
			t.since = s.Since
		}
		t.pods += s.Pods
		t.tokensIssued += s.TokensIssued
		t.tokenErrors += s.TokenErrors
		if s.LastError != "" {
			t.lastError = s.LastError
		}
		for _, m := range s.Members {
			mt := t.member(m.Member)
			mt.Requests += m.Requests
			mt.Unauthorized += m.Unauthorized
			mt.TokensMinted += m.TokensMinted
			for code, n := range m.Statuses {
				mt.Statuses[code] += n
			}
			t.requests += m.Requests
			t.unauthorized += m.Unauthorized
			t.noResponse += m.Statuses[0]
		}
		for _, p := range s.Pairs {
			pt := t.pair(p.MintedBy, p.ServedBy)
			pt.Requests += p.Requests
			pt.Unauthorized += p.Unauthorized
		}
		for _, p := range s.PerPod {
			pt := t.pod(p.Pod)
			if p.Node != "" {
				pt.Node = p.Node
			}
			pt.Requests += p.Requests
			pt.Unauthorized += p.Unauthorized
			if p.LastAccepted.After(pt.LastAccepted) {
				pt.LastAccepted = p.LastAccepted
			}
			if !p.FirstUnauthorized.IsZero() && (pt.FirstUnauthorized.IsZero() || p.FirstUnauthorized.Before(pt.FirstUnauthorized)) {
				pt.FirstUnauthorized = p.FirstUnauthorized
			}
		}
		t.samples = append(t.samples, s.Samples...)
		for _, r := range s.Reasons {
			if len(t.reasons) < maxReasons && !slices.Contains(t.reasons, r) {
				t.reasons = append(t.reasons, r)
			}
		}
	}
	sort.Slice(t.samples, func(i, j int) bool { return t.samples[i].Time.Before(t.samples[j].Time) })
	if len(t.samples) > maxSamples {
		t.samples = t.samples[:maxSamples]
	}
	out := t.snapshot()
	if len(snaps) == 1 {
		out.Namespace = snaps[0].Namespace
	}
	return out
}

// Tally is the mutable state behind Snapshot, safe for concurrent use. The zero value counts
// from the zero time; Reset starts it over.
type Tally struct {
	mu           sync.Mutex
	since        time.Time
	pods         int
	requests     int
	unauthorized int
	noResponse   int
	tokensIssued int
	tokenErrors  int
	lastError    string
	members      map[string]*Member
	pairs        map[[2]string]*Pair
	perPod       map[string]*Pod
	samples      []Sample
	reasons      []string
}

// Reset starts the counts over from now (the number of pods stays).
func (t *Tally) Reset(now time.Time) Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.snapshot()
	t.reset(now)
	return s
}

func (t *Tally) reset(now time.Time) {
	t.since = now
	t.requests, t.unauthorized, t.noResponse, t.tokensIssued, t.tokenErrors = 0, 0, 0, 0, 0
	t.lastError = ""
	t.members = map[string]*Member{}
	t.pairs = map[[2]string]*Pair{}
	t.perPod = map[string]*Pod{}
	t.samples = nil
	t.reasons = nil
}

// init makes the zero value usable.
func (t *Tally) init() {
	if t.members == nil {
		t.reset(t.since)
	}
}

// SetPods records how many pods make the requests.
func (t *Tally) SetPods(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pods = n
}

// PodOn records the node a pod runs on.
func (t *Tally) PodOn(pod, node string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	t.pod(pod).Node = node
}

func (t *Tally) pod(name string) *Pod {
	p, ok := t.perPod[name]
	if !ok {
		p = &Pod{Pod: name}
		t.perPod[name] = p
	}
	return p
}

func (t *Tally) member(name string) *Member {
	m, ok := t.members[name]
	if !ok {
		m = &Member{Member: name, Statuses: map[int]int{}}
		t.members[name] = m
	}
	return m
}

func (t *Tally) pair(minted, served string) *Pair {
	k := [2]string{minted, served}
	p, ok := t.pairs[k]
	if !ok {
		p = &Pair{MintedBy: minted, ServedBy: served}
		t.pairs[k] = p
	}
	return p
}

// Request records one API call made with a tenant token: when its answer came, the pod, the
// member that served it ("" or NoResponse: none answered) and the one that minted the token
// ("" when not known), its HTTP status (0: no response), the token's age and, for a 401, the
// reason the member gave ("" when not known).
func (t *Tally) Request(now time.Time, pod, servedBy, mintedBy string, status int, tokenAge time.Duration, reason string) {
	if servedBy == "" {
		servedBy = NoResponse
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	t.requests++
	m := t.member(servedBy)
	m.Requests++
	m.Statuses[status]++
	p := t.pair(mintedBy, servedBy)
	p.Requests++
	pt := t.pod(pod)
	pt.Requests++
	if status >= 200 && status < 300 {
		pt.LastAccepted = now
	}
	switch status {
	case 0:
		t.noResponse++
	case http.StatusUnauthorized:
		t.unauthorized++
		m.Unauthorized++
		p.Unauthorized++
		pt.Unauthorized++
		if pt.FirstUnauthorized.IsZero() {
			pt.FirstUnauthorized = now
		}
		if len(t.samples) < maxSamples {
			t.samples = append(t.samples, Sample{Time: now, Pod: pod, ServedBy: servedBy, MintedBy: mintedBy, TokenAge: tokenAge.Round(time.Millisecond).String()})
		}
		if reason != "" && len(t.reasons) < maxReasons && !slices.Contains(t.reasons, reason) {
			t.reasons = append(t.reasons, reason)
		}
	}
}

// Minted records one TokenRequest answered by member by ("" when not known); err != nil: it
// failed (or the token could not be read).
func (t *Tally) Minted(by string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.init()
	if err != nil {
		t.tokenErrors++
		t.lastError = err.Error()
		return
	}
	t.tokensIssued++
	if by != "" {
		t.member(by).TokensMinted++
	}
}

// Fail records an error that is no request's answer (the last one is kept).
func (t *Tally) Fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastError = err.Error()
}

// Snapshot returns a consistent copy of the counts.
func (t *Tally) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.snapshot()
}

func (t *Tally) snapshot() Snapshot {
	s := Snapshot{
		Since: t.since, Pods: t.pods, Requests: t.requests, Unauthorized: t.unauthorized, NoResponse: t.noResponse,
		TokensIssued: t.tokensIssued, TokenErrors: t.tokenErrors, LastError: t.lastError,
		Members: []Member{}, Samples: append([]Sample(nil), t.samples...), Reasons: slices.Sorted(slices.Values(t.reasons)),
	}
	for _, m := range t.members {
		c := *m
		c.Statuses = make(map[int]int, len(m.Statuses))
		for k, v := range m.Statuses {
			c.Statuses[k] = v
		}
		s.Members = append(s.Members, c)
	}
	sort.Slice(s.Members, func(i, j int) bool { return memberLess(s.Members[i].Member, s.Members[j].Member) })
	for _, p := range t.pairs {
		s.Pairs = append(s.Pairs, *p)
	}
	for _, p := range t.perPod {
		s.PerPod = append(s.PerPod, *p)
	}
	sort.Slice(s.PerPod, func(i, j int) bool { return memberLess(s.PerPod[i].Pod, s.PerPod[j].Pod) })
	sort.Slice(s.Pairs, func(i, j int) bool {
		a, b := s.Pairs[i], s.Pairs[j]
		if a.MintedBy != b.MintedBy {
			return memberLess(a.MintedBy, b.MintedBy)
		}
		return memberLess(a.ServedBy, b.ServedBy)
	})
	return s
}

// memberLess orders "apiserver-2" before "apiserver-10" and NoResponse last.
func memberLess(a, b string) bool {
	if (a == NoResponse) != (b == NoResponse) {
		return b == NoResponse
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}
