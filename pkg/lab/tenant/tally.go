package tenant

import (
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/bearer"
)

// NoResponse is the member name recorded when a request got no HTTP response at all (connection
// refused, reset, timeout): there was no TLS handshake to name the member.
const NoResponse = bearer.NoResponse

// maxSamples bounds the 401 samples a tally keeps.
const maxSamples = 50

// MemberTally counts the requests one member served.
type MemberTally struct {
	Member       string      `json:"member"`
	Requests     int         `json:"requests"`
	Unauthorized int         `json:"unauthorized"`
	Statuses     map[int]int `json:"statuses"`               // HTTP status -> count; 0 = no response
	TokensMinted int         `json:"tokensMinted,omitempty"` // TokenRequests this member answered
}

// PairTally counts requests by which member minted the token and which member served the request.
type PairTally struct {
	MintedBy     string `json:"mintedBy"`
	ServedBy     string `json:"servedBy"`
	Requests     int    `json:"requests"`
	Unauthorized int    `json:"unauthorized"`
}

// PodTally counts one pod's requests.
type PodTally struct {
	Pod               string    `json:"pod"`
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
	Namespace    string        `json:"namespace"`
	Pods         int           `json:"pods"`
	Since        time.Time     `json:"since"` // start, or the last Reset
	Requests     int           `json:"requests"`
	Unauthorized int           `json:"unauthorized"`
	NoResponse   int           `json:"noResponse"`
	TokensIssued int           `json:"tokensIssued"`
	TokenErrors  int           `json:"tokenErrors"`
	LastError    string        `json:"lastError,omitempty"`
	Members      []MemberTally `json:"members"`
	Pairs        []PairTally   `json:"pairs,omitempty"`
	PerPod       []PodTally    `json:"perPod,omitempty"`
	Samples      []Sample      `json:"samples,omitempty"` // up to 50 401s, oldest first
}

// Member returns the tally of one member (zero if it served nothing).
func (s Snapshot) Member(name string) MemberTally {
	for _, m := range s.Members {
		if m.Member == name {
			return m
		}
	}
	return MemberTally{Member: name, Statuses: map[int]int{}}
}

// Pod returns the tally of one pod (zero if it made no request).
func (s Snapshot) Pod(name string) PodTally {
	for _, p := range s.PerPod {
		if p.Pod == name {
			return p
		}
	}
	return PodTally{Pod: name}
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
	var t tally
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

// tally is the mutable state behind Snapshot; the zero value needs reset before use.
type tally struct {
	mu           sync.Mutex
	since        time.Time
	pods         int
	requests     int
	unauthorized int
	noResponse   int
	tokensIssued int
	tokenErrors  int
	lastError    string
	members      map[string]*MemberTally
	pairs        map[[2]string]*PairTally
	perPod       map[string]*PodTally
	samples      []Sample
}

func (t *tally) reset(now time.Time) {
	t.since = now
	t.requests, t.unauthorized, t.noResponse, t.tokensIssued, t.tokenErrors = 0, 0, 0, 0, 0
	t.lastError = ""
	t.members = map[string]*MemberTally{}
	t.pairs = map[[2]string]*PairTally{}
	t.perPod = map[string]*PodTally{}
	t.samples = nil
}

func (t *tally) pod(name string) *PodTally {
	p, ok := t.perPod[name]
	if !ok {
		p = &PodTally{Pod: name}
		t.perPod[name] = p
	}
	return p
}

func (t *tally) member(name string) *MemberTally {
	m, ok := t.members[name]
	if !ok {
		m = &MemberTally{Member: name, Statuses: map[int]int{}}
		t.members[name] = m
	}
	return m
}

func (t *tally) pair(minted, served string) *PairTally {
	k := [2]string{minted, served}
	p, ok := t.pairs[k]
	if !ok {
		p = &PairTally{MintedBy: minted, ServedBy: served}
		t.pairs[k] = p
	}
	return p
}

// request records one API call made with a tenant token.
func (t *tally) request(now time.Time, pod, servedBy, mintedBy string, status int, tokenAge time.Duration) {
	if servedBy == "" {
		servedBy = NoResponse
	}
	t.mu.Lock()
	defer t.mu.Unlock()
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
	}
}

// minted records one TokenRequest (err != nil: it failed).
func (t *tally) minted(by string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
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

func (t *tally) fail(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastError = err.Error()
}

func (t *tally) snapshot() Snapshot {
	s := Snapshot{
		Since: t.since, Pods: t.pods, Requests: t.requests, Unauthorized: t.unauthorized, NoResponse: t.noResponse,
		TokensIssued: t.tokensIssued, TokenErrors: t.tokenErrors, LastError: t.lastError,
		Members: []MemberTally{}, Samples: append([]Sample(nil), t.samples...),
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
